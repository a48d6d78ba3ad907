// fleet_host_test.cpp - the default --host: the host name with the
// machine id, so cloned hosts of one name do not take each other's windows
// for their own (ship/fleet_host.h).
#include "ship/fleet_host.h"

#include <catch2/catch.hpp>

#include <string>

#include "test_files.h"

using lcpi::ship::DefaultFleetHost;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

TEST_CASE("the default host is the host name and the machine id") {
  TempDir dir;
  const std::string id = dir / "machine-id";
  WriteFile(id, "0123456789abcdef0123456789abcdef\n");
  CHECK(DefaultFleetHost("ubuntu", id) == "ubuntu/0123456789abcdef0123456789abcdef");
  // Two clones named alike, machine ids apart: two hosts.
  WriteFile(id, "fedcba9876543210fedcba9876543210\n");
  CHECK(DefaultFleetHost("ubuntu", id) == "ubuntu/fedcba9876543210fedcba9876543210");
}

TEST_CASE("without a readable machine id the default host is the host name") {
  TempDir dir;
  CHECK(DefaultFleetHost("web-17", dir / "none") == "web-17");
  const std::string bad = dir / "machine-id";
  WriteFile(bad, "not an id\n");
  CHECK(DefaultFleetHost("web-17", bad) == "web-17");
}
