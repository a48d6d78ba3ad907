// control_server.cpp - socket set-up, peer checks and the request loop.
#include "daemon/control_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "libprofile/base/control_protocol.h"

namespace lcpi {

ControlServer::~ControlServer() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(path_.c_str());
  }
}

Expected<void> ControlServer::Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Error(Errc::kInvalidArgument, "control socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  // Another daemon answering on it means we must not steal it.
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe >= 0) {
    bool live = connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(probe);
    if (live) return Error(Errc::kBusy, "another lcpid is listening on " + path);
  }
  // A stale socket of an earlier lcpid is replaced; anything else at that
  // path (a file, a link, a directory) is someone's data: refuse, touch nothing.
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Error(Errc::kInvalidArgument,
                   path + " exists and is not a socket: not removing it (choose --socket)");
    if (unlink(path.c_str()) < 0) return ErrnoError("unlink " + path, errno);
  } else if (errno != ENOENT) {
    return ErrnoError(path, errno);
  }
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return ErrnoError("socket", errno);
  mode_t old = umask(077);
  int rc = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  umask(old);
  if (rc < 0) return ErrnoError("bind " + path, err);
  if (chmod(path.c_str(), 0600) < 0) return ErrnoError("chmod " + path, errno);
  if (listen(fd_, 8) < 0) return ErrnoError("listen " + path, errno);
  path_ = path;
  return {};
}

void ControlServer::ServePending(const Handler& handler) {
  for (;;) {
    int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    ucred cred{};
    socklen_t len = sizeof(cred);
    std::string reply;
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
      reply = "error permission denied: the control socket is for root\n\n";
    } else {
      std::string request;
      char buf[512];
      // A client has one second to send its line.
      pollfd p{c, POLLIN, 0};
      while (request.find('\n') == std::string::npos && request.size() < kMaxRequestBytes &&
             poll(&p, 1, 1000) > 0) {
        ssize_t n = read(c, buf, sizeof(buf));
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      request = request.substr(0, request.find('\n'));
      reply = handler(request);
    }
    size_t off = 0;
    while (off < reply.size()) {
      ssize_t n = send(c, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(c);
  }
}

}  // namespace lcpi
