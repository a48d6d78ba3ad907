// lcpictl - talks to a running lcpid over its control socket: status, flush,
// a new epoch (with a tag), stop. Root only, like the socket.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "libprofile/base/command_line.h"
#include "libprofile/base/control_protocol.h"
#include "libprofile/base/text.h"

namespace {

// Sends one request; prints the reply's body. Returns the exit status.
int Request(const std::string& socket_path, const std::string& request) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    std::cerr << "lcpictl: socket path too long\n";
    return 2;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
    int err = errno;
    std::cerr << "lcpictl: cannot reach lcpid at " << socket_path << ": " << std::strerror(err)
              << (err == ENOENT || err == ECONNREFUSED ? " (is lcpid running?)" : "")
              << (err == EACCES ? " (the control socket is root only)" : "") << "\n";
    return 1;
  }
  std::string line = request + "\n";
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) < 0) {
    std::cerr << "lcpictl: send: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t nl = reply.find('\n');
  std::string first = reply.substr(0, nl);
  std::string body = nl == std::string::npos ? "" : reply.substr(nl + 1);
  while (!body.empty() && body.back() == '\n') body.pop_back();
  if (first.rfind("ok", 0) == 0) {
    // The daemon's answer may name what users chose (paths, commands): shown
    // by the tools' one convention (Printable, base/text.h).
    if (!body.empty()) std::cout << lcpi::Printable(body, /*keep_newlines=*/true) << "\n";
    return 0;
  }
  std::cerr << "lcpictl: " << (first.empty() ? "no reply from lcpid" : lcpi::Printable(first))
            << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lcpictl - control a running lcpid"};
  std::string socket_path = lcpi::kDefaultControlSocket;
  app.add_option("--socket", socket_path, "lcpid's control socket")->capture_default_str();
  app.require_subcommand(1);
  app.add_subcommand("status",
                     "source, events really sampled, samples/s, hits, misses, evictions, lost, "
                     "unknown share, daemon CPU per sample, memory");
  app.add_subcommand("flush", "merge everything sampled so far into the database now");
  std::string tag;
  auto* epoch = app.add_subcommand(
      "epoch",
      "flush, then start a new epoch; it and the time windows lcpid closes after it form a "
      "span, up to the next epoch");
  epoch->add_option("--tag", tag,
                    "a name for the new epoch's span (unique): lcpiprof --epoch TAG sums it");
  app.add_subcommand("calibrate",
                     "measure again what one sample costs this host (lcpid does at start and "
                     "every --calibrate-every); status shows sample_cost_ns when done");
  std::string budget_pct;
  auto* budget = app.add_subcommand(
      "budget",
      "set the cost budget (lcpid --max-overhead): percent of each CPU sampling may cost, 0: "
      "off; the rate follows from the next window (lcpid ends the current one early when the "
      "rate changes); status shows max_overhead_pct and governed_rate_per_cpu");
  budget->add_option("PCT", budget_pct, "percent of each CPU, 0 to 100 (e.g. 1, 0.5)")->required();
  app.add_subcommand("stop", "flush and stop the daemon");
  app.footer(
      "Examples:\n"
      "  lcpictl status\n"
      "  lcpictl epoch --tag before-upgrade\n"
      "  lcpictl budget 0.5\n"
      "  lcpictl --socket /tmp/lcpid.sock flush");
  if (std::optional<int> status = lcpi::ParseCommandLine(app, argc, argv)) return *status;
  std::string verb = app.get_subcommands().front()->get_name();
  if (verb == "epoch" && !tag.empty()) {
    if (tag.find_first_of("\n\r") != std::string::npos) {
      std::cerr << "lcpictl: a tag is one line\n";
      return 2;
    }
    verb += " " + tag;
  }
  if (verb == "budget") {
    // lcpid checks the number; one line, so the request stays one request
    if (budget_pct.find_first_of("\n\r") != std::string::npos) {
      std::cerr << "lcpictl: a budget is one number\n";
      return 2;
    }
    verb += " " + budget_pct;
  }
  return Request(socket_path, verb);
}
