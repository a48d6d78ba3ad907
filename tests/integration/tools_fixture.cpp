// tools_fixture.cpp - writes the report fixture (tests/unit/report/report_fixture.h)
// into the directory given: the profile database the CLI tests of
// tests/integration/tools.cmake run lcpiprof, lcpilist and lcpidiff on.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "tests/unit/report/report_fixture.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    lcpi::testing::ReportFixture f = lcpi::testing::MakeReportFixture(argv[1]);
    std::printf("%s\n", f.db.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
