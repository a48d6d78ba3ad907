// lcpi_nm.h - the address of each symbol of a static, non-PIE workload, read
// from `nm -S --defined-only` output made on the host (the arm64 guest has
// no binutils): the addresses the guest samples are the ones nm prints.
// For the checkers that attribute the module's records by address
// (lcpi_kmod_shares, lcpi_kmod_storm).
#ifndef LCPI_TESTS_KMOD_LCPI_NM_H
#define LCPI_TESTS_KMOD_LCPI_NM_H

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

struct NmSymbol {
  uint64_t start = 0;
  uint64_t size = 0;  // 0 for symbols without one (etext, __executable_start)
};

// Every symbol in the file, by name: lines "ADDRESS SIZE TYPE NAME" and,
// for symbols without a size, "ADDRESS TYPE NAME" (split into words: a type
// letter may look like a hex digit). An unreadable file ends the checker
// with exit status 2.
inline std::map<std::string, NmSymbol> ReadNm(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (!f) {
    std::fprintf(stderr, "%s: %s\n", path, std::strerror(errno));
    std::exit(2);
  }
  std::map<std::string, NmSymbol> out;
  char line[512];
  while (std::fgets(line, sizeof(line), f)) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    if (w.size() == 4)
      out[w[3]] = NmSymbol{std::strtoull(w[0].c_str(), nullptr, 16),
                           std::strtoull(w[1].c_str(), nullptr, 16)};
    else if (w.size() == 3)
      out[w[2]] = NmSymbol{std::strtoull(w[0].c_str(), nullptr, 16), 0};
  }
  std::fclose(f);
  return out;
}

#endif  // LCPI_TESTS_KMOD_LCPI_NM_H
