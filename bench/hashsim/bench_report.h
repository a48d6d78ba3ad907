// bench_report.h - what every bench result file says about where it was
// measured (CPU count and model, kernel release, date) and a minimal JSON
// writer, so lcpi-hashsim and lcpi-bench-daemon describe their machine the
// same way. Header-only; used by bench/hashsim and bench/daemon.
#ifndef LCPI_BENCH_HASHSIM_BENCH_REPORT_H
#define LCPI_BENCH_HASHSIM_BENCH_REPORT_H

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

namespace lcpi::bench {

struct Machine {
  long nproc = 0;
  std::string cpu_model;
  std::string kernel;
  std::string date;  // UTC, ISO 8601
};

inline Machine DescribeMachine() {
  Machine m;
  m.nproc = sysconf(_SC_NPROCESSORS_ONLN);
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) m.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  utsname u{};
  if (uname(&u) == 0) m.kernel = u.release;
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  m.date = buf;
  return m;
}

inline std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

inline std::string JsonMachine(const Machine& m) {
  std::ostringstream o;
  o << "{\"nproc\": " << m.nproc << ", \"cpu_model\": " << JsonString(m.cpu_model)
    << ", \"kernel\": " << JsonString(m.kernel) << ", \"date\": " << JsonString(m.date) << "}";
  return o.str();
}

inline std::string MarkdownMachine(const Machine& m) {
  std::ostringstream o;
  o << "Machine: " << m.nproc << " CPUs, " << m.cpu_model << ", kernel " << m.kernel
    << "; measured " << m.date << ".\n";
  return o.str();
}

// Writes text to path; false (and a message on stderr) on failure.
inline bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace lcpi::bench

#endif  // LCPI_BENCH_HASHSIM_BENCH_REPORT_H
