// proc_start.h - a process's start time, field 22 of /proc/PID/stat (clock
// ticks since boot, CLOCK_BOOTTIME): with the pid and the boot it names one
// process for ever, so that a pid taken by another process is told apart.
#ifndef LCPI_LIBPROFILE_BASE_PROC_START_H
#define LCPI_LIBPROFILE_BASE_PROC_START_H

#include <cstdint>
#include <string>
#include <string_view>

namespace lcpi {

// The start time in /proc/PID/stat's text, as written ("" if malformed).
std::string StartTicksOf(std::string_view stat);
// Of the file at stat_path, or of the "stat" in an open /proc/PID
// directory (openat: the process that directory is, never a later one with
// its pid); "" if unreadable.
std::string StartTicks(const std::string& stat_path);
std::string StartTicksAt(int proc_pid_dir);
// CLOCK_BOOTTIME now, in ns; a start in ticks in ns (the tick's start: never
// later than the process began).
uint64_t BoottimeNs();
uint64_t TicksToNs(uint64_t ticks);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_PROC_START_H
