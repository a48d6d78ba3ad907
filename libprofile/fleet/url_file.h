// url_file.h - the ClickHouse URL read from a file (lcpi-ship and lcpiprof --fleet-url-file): a URL
// carries the server's password, and a command line is world-readable in
// /proc/PID/cmdline, so the unit gives a file (a systemd credential).
#ifndef LCPI_LIBPROFILE_FLEET_URL_FILE_H
#define LCPI_LIBPROFILE_FLEET_URL_FILE_H

#include <string>

#include "libprofile/base/error.h"

namespace lcpi::fleet {

// The file's first line without surrounding white space. Refused, without
// showing its content: a file that is not regular, that others may read
// (mode & 0007), that is empty, or longer than 64 KiB.
Expected<std::string> ReadUrlFile(const std::string& path);

}  // namespace lcpi::fleet

#endif  // LCPI_LIBPROFILE_FLEET_URL_FILE_H
