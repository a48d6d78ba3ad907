// store_test_util.h - what the store's window and retention tests share: a
// temporary directory removed afterwards, and opening or unwrapping with the
// error shown when it fails.
#ifndef LCPI_TESTS_UNIT_STORE_STORE_TEST_UTIL_H
#define LCPI_TESTS_UNIT_STORE_STORE_TEST_UTIL_H

#include <stdlib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "libprofile/store/profile_db.h"

namespace lcpi::testing {

struct TempDir {
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) FAIL("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string File(const std::string& name) const { return (path / name).string(); }
  std::filesystem::path path;
};

inline std::unique_ptr<ProfileDb> OpenOk(const std::string& path,
                                         DbMode mode = DbMode::kReadWrite) {
  auto db = ProfileDb::Open(path, mode);
  INFO((db ? std::string("ok") : db.error().ToString()));
  REQUIRE(db.has_value());
  return std::move(*db);
}

template <class T>
T Ok(Expected<T> e) {
  INFO((e ? std::string("ok") : e.error().ToString()));
  REQUIRE(e.has_value());
  return std::move(*e);
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_STORE_STORE_TEST_UTIL_H
