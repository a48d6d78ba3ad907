// control_server.h - the daemon's end of the control socket: a Unix stream
// socket created 0600 (root only; peers are also checked with SO_PEERCRED),
// one request line per connection, answered by a handler.
//
// It runs on lcpid's sampling loop, so it never waits: each call accepts
// what is pending and reads what has arrived, without blocking; a request
// is answered once its line is complete. A client gets kRequestTimeout to
// send its line and at most kMaxClients wait at once: one that sends a byte
// a second, or many that send nothing, cost the loop nothing.
#ifndef LCPI_DAEMON_CONTROL_SERVER_H
#define LCPI_DAEMON_CONTROL_SERVER_H

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

class ControlServer {
 public:
  using Handler = std::function<std::string(const std::string& request)>;

  static constexpr auto kRequestTimeout = std::chrono::seconds(1);
  static constexpr size_t kMaxClients = 16;

  ~ControlServer();
  // Binds path (replacing a stale socket nobody listens on; refusing
  // anything else there).
  Expected<void> Listen(const std::string& path);
  int fd() const { return fd_; }
  // Accepts and reads without blocking; answers every complete request.
  void ServePending(const Handler& handler);

 private:
  struct Client {
    int fd = -1;
    std::string request;
    std::chrono::steady_clock::time_point deadline;
  };
  void Accept();
  // Reads what has arrived; true when the client is done (answered or gone).
  bool Serve(Client& client, const Handler& handler);

  int fd_ = -1;
  std::string path_;
  std::vector<Client> clients_;
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_CONTROL_SERVER_H
