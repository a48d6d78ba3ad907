// time_spec.cpp - see time_spec.h. Calendar arithmetic is the C library's
// (timegm for UTC and offsets, mktime for local time); only the spelling is
// parsed here.
#include "libprofile/base/time_spec.h"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <optional>

namespace lcpi {

namespace {

constexpr int64_t kMaxDuration = int64_t{100} * 366 * 86400;  // 100 years
constexpr uint64_t kMaxSize = uint64_t{1} << 62;

const char* const kDurationForms = "a duration such as 30s, 10m, 1h, 1h30m, 30d or 2w";
const char* const kTimeForms =
    "a time such as 2h (two hours ago), now, 2026-11-23, 2026-11-23T14:00, "
    "2026-11-23T14:00:00Z, 2026-11-23 14:00+01:00 or @1795000000";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads up to 18 digits at text[*pos]; nullopt when none.
std::optional<int64_t> Digits(std::string_view text, size_t* pos, size_t max_digits = 18) {
  size_t start = *pos;
  int64_t v = 0;
  while (*pos < text.size() && IsDigit(text[*pos]) && *pos - start < max_digits) {
    v = v * 10 + (text[*pos] - '0');
    ++*pos;
  }
  if (*pos == start) return std::nullopt;
  return v;
}

// Exactly `n` digits at text[*pos].
std::optional<int> Fixed(std::string_view text, size_t* pos, size_t n) {
  if (*pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[*pos + i];
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  return v;
}

int64_t UnitSeconds(char unit) {
  switch (unit) {
    case 's':
      return 1;
    case 'm':
      return 60;
    case 'h':
      return 3600;
    case 'd':
      return 86400;
    case 'w':
      return 7 * 86400;
    default:
      return 0;
  }
}

// The date and time fields of an ISO 8601 text, and its zone.
struct IsoTime {
  std::tm tm{};
  enum { kLocal, kUtc, kOffset } zone = kLocal;
  int offset_seconds = 0;  // east of UTC, with kOffset
};

std::optional<IsoTime> ParseIso(std::string_view t) {
  IsoTime r;
  size_t pos = 0;
  auto year = Fixed(t, &pos, 4);
  if (!year || pos >= t.size() || t[pos++] != '-') return std::nullopt;
  auto month = Fixed(t, &pos, 2);
  if (!month || pos >= t.size() || t[pos++] != '-') return std::nullopt;
  auto day = Fixed(t, &pos, 2);
  if (!day) return std::nullopt;
  int hour = 0, minute = 0, second = 0;
  if (pos < t.size() && (t[pos] == 'T' || t[pos] == 't' || t[pos] == ' ')) {
    ++pos;
    auto h = Fixed(t, &pos, 2);
    if (!h || pos >= t.size() || t[pos++] != ':') return std::nullopt;
    auto m = Fixed(t, &pos, 2);
    if (!m) return std::nullopt;
    hour = *h;
    minute = *m;
    if (pos < t.size() && t[pos] == ':') {
      ++pos;
      auto s = Fixed(t, &pos, 2);
      if (!s) return std::nullopt;
      second = *s;
    }
  }
  if (pos < t.size()) {
    if ((t[pos] == 'Z' || t[pos] == 'z') && pos + 1 == t.size()) {
      r.zone = IsoTime::kUtc;
      pos = t.size();
    } else if (t[pos] == '+' || t[pos] == '-') {
      int sign = t[pos++] == '-' ? -1 : 1;
      auto oh = Fixed(t, &pos, 2);
      if (!oh) return std::nullopt;
      int om = 0;
      if (pos < t.size() && t[pos] == ':') ++pos;
      if (pos < t.size()) {
        auto m = Fixed(t, &pos, 2);
        if (!m) return std::nullopt;
        om = *m;
      }
      if (pos != t.size() || *oh > 23 || om > 59) return std::nullopt;
      r.zone = IsoTime::kOffset;
      r.offset_seconds = sign * (*oh * 3600 + om * 60);
    } else {
      return std::nullopt;
    }
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || hour > 23 || minute > 59 ||
      second > 59) {
    return std::nullopt;
  }
  r.tm.tm_year = *year - 1900;
  r.tm.tm_mon = *month - 1;
  r.tm.tm_mday = *day;
  r.tm.tm_hour = hour;
  r.tm.tm_min = minute;
  r.tm.tm_sec = second;
  return r;
}

}  // namespace

Expected<int64_t> ParseDuration(std::string_view text) {
  auto bad = [&](const char* why) {
    return Error(Errc::kInvalidArgument, "'" + std::string(text) + "' is not a duration (" + why +
                                             "; give " + kDurationForms + ")");
  };
  if (text.empty()) return bad("empty");
  size_t pos = 0;
  int64_t total = 0;
  while (pos < text.size()) {
    auto n = Digits(text, &pos, 12);
    if (!n) return bad("expected a number");
    int64_t unit = 1;
    if (pos < text.size()) {
      unit = UnitSeconds(text[pos]);
      if (unit == 0) return bad("unknown unit");
      ++pos;
    } else if (total != 0) {
      return bad("a unit is missing");
    }
    if (*n > kMaxDuration / unit) return bad("longer than 100 years");
    total += *n * unit;
    if (total > kMaxDuration) return bad("longer than 100 years");
  }
  if (total <= 0) return bad("not positive");
  return total;
}

Expected<uint64_t> ParseSize(std::string_view text) {
  auto bad = [&](const char* why) {
    return Error(Errc::kInvalidArgument, "'" + std::string(text) + "' is not a size (" + why +
                                             "; give bytes or a number with K, M, G or T, "
                                             "e.g. 512M or 2G)");
  };
  size_t pos = 0;
  auto n = Digits(text, &pos, 18);
  if (!n) return bad("expected a number");
  std::string unit(text.substr(pos));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  const char* units = "KMGT";
  for (int i = 0; i < 4 && shift < 0; ++i) {
    std::string u(1, units[i]);
    if (unit == u || unit == u + "B" || unit == u + "IB") shift = 10 * (i + 1);
  }
  if (shift < 0) return bad("unknown unit");
  if (static_cast<uint64_t>(*n) > (kMaxSize >> shift)) return bad("too large");
  return static_cast<uint64_t>(*n) << shift;
}

Expected<int64_t> ParseTimeSpec(std::string_view text, int64_t now) {
  auto bad = [&](const std::string& why) {
    return Error(Errc::kInvalidArgument, "'" + std::string(text) + "' is not a time (" + why +
                                             "; give " + kTimeForms + ")");
  };
  if (text.empty()) return bad("empty");
  if (text == "now") return now;
  if (text[0] == '@') {
    size_t pos = 1;
    auto s = Digits(text, &pos, 12);
    if (!s || pos != text.size()) return bad("expected digits after @");
    return *s;
  }
  // A date starts with four digits and a dash; anything else is a duration.
  if (text.size() >= 5 && IsDigit(text[0]) && IsDigit(text[1]) && IsDigit(text[2]) &&
      IsDigit(text[3]) && text[4] == '-') {
    std::optional<IsoTime> iso = ParseIso(text);
    if (!iso) return bad("not ISO 8601, or an impossible date or time");
    std::tm tm = iso->tm;
    std::time_t t;
    if (iso->zone == IsoTime::kLocal) {
      tm.tm_isdst = -1;  // let the C library find daylight saving time
      t = std::mktime(&tm);
    } else {
      t = timegm(&tm);
    }
    if (t == static_cast<std::time_t>(-1)) return bad("out of range");
    // mktime and timegm normalise 2026-02-30 to March 2: refuse it instead.
    if (tm.tm_mday != iso->tm.tm_mday || tm.tm_mon != iso->tm.tm_mon) {
      return bad("no such day");
    }
    return static_cast<int64_t>(t) - iso->offset_seconds;
  }
  Expected<int64_t> ago = ParseDuration(text);
  if (!ago) return bad("neither a date nor a duration");
  return now - *ago;
}

std::string FormatUtc(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatDuration(int64_t seconds) {
  if (seconds <= 0) return "0s";
  std::string out;
  for (char unit : {'w', 'd', 'h', 'm', 's'}) {
    int64_t u = UnitSeconds(unit);
    if (seconds >= u) {
      // Weeks only when they are exact: "30d" reads better than "4w2d".
      if (unit == 'w' && seconds % u != 0) continue;
      out += std::to_string(seconds / u) + unit;
      seconds %= u;
    }
  }
  return out;
}

std::string FormatSize(uint64_t bytes) {
  const char* units = "TGMK";
  for (int i = 0; i < 4; ++i) {
    int shift = 10 * (4 - i);
    uint64_t u = uint64_t{1} << shift;
    if (bytes >= u && bytes % u == 0) return std::to_string(bytes >> shift) + units[i];
  }
  return std::to_string(bytes);
}

}  // namespace lcpi
