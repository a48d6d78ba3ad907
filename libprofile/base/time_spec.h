// time_spec.h - durations, sizes and points in time as people type them on
// lcpid's and the tools' command lines ("10m", "30d", "2G", "2h" meaning two
// hours ago, "2026-11-23T14:00", "2026-11-23 14:00:00+01:00"), one parser each
// so every command accepts and refuses the same spellings, and the ISO 8601
// form the reports print.
#ifndef LCPI_LIBPROFILE_BASE_TIME_SPEC_H
#define LCPI_LIBPROFILE_BASE_TIME_SPEC_H

#include <cstdint>
#include <string>
#include <string_view>

#include "libprofile/base/error.h"

namespace lcpi {

// A positive duration in seconds: one or more NUMBER UNIT terms, UNIT one of
// s, m, h, d, w ("90s", "10m", "1h30m", "30d"); a bare number is seconds.
// kInvalidArgument (saying which forms work) for anything else, zero, or a
// total above 100 years.
Expected<int64_t> ParseDuration(std::string_view text);

// A size in bytes: NUMBER with an optional binary unit K, M, G or T (also
// KB/KiB, ...; 1K = 1024), e.g. "2G", "512M", "1048576". kInvalidArgument
// for anything else or a size above 2^62 bytes.
Expected<uint64_t> ParseSize(std::string_view text);

// A point in time as unix seconds, relative to `now` (unix seconds):
//  - "now";
//  - a duration as ParseDuration reads it, meaning that long before now
//    ("2h": two hours ago);
//  - ISO 8601 "YYYY-MM-DD", "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS" (a
//    space may replace the T), in local time, or in UTC with a trailing "Z",
//    or at an offset "+HH:MM", "-HH:MM", "+HHMM", "+HH";
//  - "@SECONDS": unix seconds.
// kInvalidArgument naming the text and the accepted forms otherwise
// (including impossible dates such as 2026-02-30).
Expected<int64_t> ParseTimeSpec(std::string_view text, int64_t now);

// ISO 8601 in UTC, "2026-11-23T14:00:00Z".
std::string FormatUtc(int64_t unix_seconds);

// The shortest ParseDuration spelling of a positive number of seconds,
// largest units first ("1h", "30d", "1h30m", "45s").
std::string FormatDuration(int64_t seconds);

// A byte count with a binary unit, as ParseSize reads it when exact ("2G",
// "512M", "1536K", "1000").
std::string FormatSize(uint64_t bytes);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_TIME_SPEC_H
