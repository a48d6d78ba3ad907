// control_server.h - the daemon's end of the control socket: a Unix stream
// socket created 0600 (root only; peers are also checked with SO_PEERCRED),
// one request line per connection, answered by a handler.
#ifndef LCPI_DAEMON_CONTROL_SERVER_H
#define LCPI_DAEMON_CONTROL_SERVER_H

#include <functional>
#include <string>

#include "libprofile/base/error.h"

namespace lcpi {

class ControlServer {
 public:
  using Handler = std::function<std::string(const std::string& request)>;

  ~ControlServer();
  // Binds path (replacing a stale socket nobody listens on).
  Expected<void> Listen(const std::string& path);
  int fd() const { return fd_; }
  // Serves every pending connection; never blocks for long on a slow client.
  void ServePending(const Handler& handler);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_CONTROL_SERVER_H
