// build_id_conflict_test.cpp - an image whose build-id another image with
// another layout claims too (a user's program linked with libc's build-id)
// is listed under its own identity, and the reports say it is a build-id
// conflict; an identity recorded before layouts were part of identities
// (the build-id alone) is no conflict with the same build-id's new one.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;

struct Db {
  std::filesystem::path dir;
  std::unique_ptr<ProfileDb> db;
  Db() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lcpi-conflict-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    auto d = ProfileDb::Open((dir / "p.db").string(), DbMode::kReadWrite);
    REQUIRE(d.has_value());
    db = std::move(*d);
  }
  ~Db() {
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void Merge(const std::vector<ImageRecord>& images) {
    auto epoch = db->CurrentEpoch();
    REQUIRE(epoch.has_value());
    MergeBatch b;
    b.epoch = *epoch;
    b.images = images;
    b.events.push_back({"cycles", "cycles", 100000});
    for (uint32_t i = 0; i < images.size(); ++i) b.counts.push_back({i, 0, 16, 100u * (i + 1)});
    auto ok = db->Merge(b);
    INFO((ok ? "" : ok.error().ToString()));
    REQUIRE(ok);
  }
  std::vector<std::string> Warnings(View view) {
    ProfOptions o;
    o.view = view;
    auto p = BuildProfile(*db, o);
    INFO((p ? "" : p.error().ToString()));
    REQUIRE(p.has_value());
    return p->warnings;
  }
};

size_t Mentioning(const std::vector<std::string>& warnings, const std::string& what) {
  return static_cast<size_t>(std::count_if(warnings.begin(), warnings.end(), [&](const auto& w) {
    return w.find("build-id conflict") != std::string::npos && w.find(what) != std::string::npos;
  }));
}

}  // namespace

TEST_CASE("an image claiming another's build-id is reported as a build-id conflict", "[report]") {
  Db d;
  d.Merge({{"build-id:c0ffee:1111111111111111", "/usr/lib/libc.so.6", ImageKind::kUser},
           {"build-id:c0ffee:2222222222222222", "/home/mallory/spin", ImageKind::kUser},
           {"build-id:aa:3333333333333333", "/bin/prog", ImageKind::kUser}});
  for (View view : {View::kImages, View::kProcedures}) {
    const std::vector<std::string> w = d.Warnings(view);
    CHECK(Mentioning(w, "/home/mallory/spin") == 1);
    CHECK(Mentioning(w, "/usr/lib/libc.so.6") == 1);
    CHECK(Mentioning(w, "/bin/prog") == 0);
  }
}

TEST_CASE("an identity recorded before layouts is no build-id conflict", "[report]") {
  Db d;
  d.Merge({{"build-id:c0ffee", "/usr/lib/libc.so.6", ImageKind::kUser},
           {"build-id:c0ffee:1111111111111111", "/usr/lib/libc.so.6", ImageKind::kUser}});
  CHECK(Mentioning(d.Warnings(View::kImages), "libc") == 0);
}

TEST_CASE("lcpidiff says a warning both sides share once", "[report]") {
  Db d;
  d.Merge({{"build-id:c0ffee:1111111111111111", "/usr/lib/libc.so.6", ImageKind::kUser},
           {"build-id:c0ffee:2222222222222222", "/home/mallory/spin", ImageKind::kUser}});
  DiffOptions o;  // the newest epoch against itself: the same conflict on both sides
  auto diff = BuildDiff(*d.db, *d.db, o);
  INFO((diff ? "" : diff.error().ToString()));
  REQUIRE(diff.has_value());
  CHECK(Mentioning(diff->warnings, "/home/mallory/spin") == 1);
}
