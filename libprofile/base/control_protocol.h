// control_protocol.h - the words lcpid and lcpictl exchange over the daemon's
// control socket: one request line, one reply ("ok ..." or "error ...")
// followed by "key value" lines and an empty line.
#ifndef LCPI_LIBPROFILE_BASE_CONTROL_PROTOCOL_H
#define LCPI_LIBPROFILE_BASE_CONTROL_PROTOCOL_H

#include <cstddef>

namespace lcpi {

// Root-only (0600) Unix stream socket.
inline constexpr const char* kDefaultControlSocket = "/run/lcpid.sock";
inline constexpr const char* kDefaultDatabase = "/var/lib/lcpi/profiles.db";
inline constexpr const char* kDefaultPidFile = "/run/lcpid.pid";

// Requests: "status", "flush", "epoch [TAG]", "stop".
inline constexpr size_t kMaxRequestBytes = 4096;

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_CONTROL_PROTOCOL_H
