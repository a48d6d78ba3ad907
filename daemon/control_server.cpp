// control_server.cpp - socket set-up, peer checks and non-blocking requests.
#include "daemon/control_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "libprofile/base/control_protocol.h"

namespace lcpi {

namespace {

// Best effort and never blocking: a reply of a few KB fits the socket's
// buffer; a client that does not read it loses the rest.
void SendReply(int fd, const std::string& reply) {
  size_t off = 0;
  while (off < reply.size()) {
    ssize_t n = send(fd, reply.data() + off, reply.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

ControlServer::~ControlServer() {
  for (Client& c : clients_) close(c.fd);
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
  Accept();
  auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < clients_.size();) {
    Client& c = clients_[i];
    bool done = Serve(c, handler);
    if (!done && now >= c.deadline) {
      SendReply(c.fd, "error request timed out: send one line within 1 s\n\n");
      done = true;
    }
    if (done) {
      close(c.fd);
      clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void ControlServer::Accept() {
  for (;;) {
    int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return;
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
      SendReply(c, "error permission denied: the control socket is for root\n\n");
      close(c);
    } else if (clients_.size() >= kMaxClients) {
      SendReply(c, "error busy: too many control clients waiting, try again\n\n");
      close(c);
    } else {
      clients_.push_back({c, "", std::chrono::steady_clock::now() + kRequestTimeout});
    }
  }
}

bool ControlServer::Serve(Client& client, const Handler& handler) {
  char buf[512];
  for (;;) {
    if (client.request.find('\n') != std::string::npos ||
        client.request.size() >= kMaxRequestBytes) {
      SendReply(client.fd, handler(client.request.substr(0, client.request.find('\n'))));
      return true;
    }
    ssize_t n = recv(client.fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) {
      client.request.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      // The client closed its end: a last line without '\n' still counts.
      if (!client.request.empty()) SendReply(client.fd, handler(client.request));
      return true;
    } else {
      return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    }
  }
}

}  // namespace lcpi
