// self_cpu.cpp - sums /proc/self/task/*/schedstat.
#include "libprofile/budget/self_cpu.h"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace lcpi {

uint64_t ThreadsCpuNs(pid_t leave_out) {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return 0;
  uint64_t total = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (leave_out != 0 && std::atol(e->d_name) == leave_out) continue;
    std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) continue;  // the thread ended meanwhile
    unsigned long long ns = 0;
    if (std::fscanf(f, "%llu", &ns) == 1) total += ns;
    std::fclose(f);
  }
  closedir(dir);
  return total;
}

}  // namespace lcpi
