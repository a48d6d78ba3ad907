// owner_identity_test.cpp - a user's copy of a root-owned image, byte for
// byte, is another image: its owner is part of its identity.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "libprofile/image/image_cache.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

using lcpi::testing::TempDir;

TEST_CASE("a user-owned copy of a root file gets its own identity, root's keeps the old one") {
  REQUIRE(geteuid() == 0);  // chown to nobody; the unit tests run as root
  const std::string original = "/usr/bin/true";
  auto root_id = lcpi::IdentifyElfFile(original);
  REQUIRE(root_id);
  REQUIRE(!root_id->build_id.empty());
  CHECK(root_id->identity == "build-id:" + root_id->build_id + ":" +
                                 root_id->identity.substr(root_id->identity.rfind(':') + 1));
  TempDir dir;
  const std::string copy = dir / "true";
  std::filesystem::copy_file(original, copy);
  auto same = lcpi::IdentifyElfFile(copy);
  REQUIRE(same);
  CHECK(same->identity == root_id->identity);  // root's copy: one identity

  REQUIRE(chown(copy.c_str(), 65534, 65534) == 0);
  auto user = lcpi::IdentifyElfFile(copy);
  REQUIRE(user);
  CHECK(user->identity != root_id->identity);
  CHECK(user->identity == root_id->identity + ":u65534");
  CHECK(!lcpi::IdentityMatches(root_id->identity, *user));
  CHECK(!lcpi::IdentityMatches("build-id:" + root_id->build_id, *user));
  CHECK(lcpi::IdentityMatches(user->identity, *user));
  CHECK(lcpi::BuildIdOfIdentity(user->identity) == root_id->build_id);
  CHECK(lcpi::CachedImageName(user->identity) ==
        lcpi::CachedImageName(root_id->identity) + "-u65534");
  CHECK(lcpi::CachedImageName("build-id:ab:cd:uxyz").empty());
}
