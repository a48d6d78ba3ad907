// state_files.h - who may read what lcpid writes. The database holds every
// process's command names and per-instruction profile, so it is never world
// readable: lcpid creates it (and SQLite its -wal and -shm, which copy the
// database's mode and owner) 0640, owned by root and the group named by
// --group (default "lcpi", made by the package or the set-up script), whose
// members read it with the tools. Without that group it is 0600, root only.
// A database directory lcpid has to create is 0750 with the same group.
#ifndef LCPI_DAEMON_STATE_FILES_H
#define LCPI_DAEMON_STATE_FILES_H

#include <sys/types.h>

#include <string>

#include "libprofile/base/error.h"

namespace lcpi {

struct StateAccess {
  std::string group;         // as asked for
  bool group_found = false;  // else root only
  gid_t gid = 0;
  mode_t file_mode = 0600;
  mode_t dir_mode = 0700;
};

// The access for --group: 0640/0750 with the group, or 0600/0700 (and
// group_found false) when no such group exists.
StateAccess ResolveStateAccess(const std::string& group);

// Before the database is opened: creates its directory (only the last
// component, only if missing) and the file itself (if missing) with
// `access`, and brings an existing database and its -wal and -shm to it
// (an older lcpid created them 0644). Never follows a symbolic link at the
// database's path. Errors: kIo/kPermission from the system calls, kBadElf
// when something other than a regular file is there.
Expected<void> PrepareStateFiles(const std::string& db_path, const StateAccess& access);

}  // namespace lcpi

#endif  // LCPI_DAEMON_STATE_FILES_H
