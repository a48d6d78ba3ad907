// report_cli.cpp - the command-line plumbing shared by the analysis tools.
#include "report_cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/fleet/url_file.h"

namespace lcpi::tools {

std::string DefaultDb() {
  const char* env = std::getenv("LCPI_DB");
  return env && *env ? env : kDefaultDatabase;
}

void AddSourceOptions(CLI::App& app, std::string* db, std::string* epoch,
                      std::vector<std::string>* events, TimeFlags* time) {
  app.add_option("--db", *db, "profile database ($LCPI_DB, else /var/lib/lcpi/profiles.db)")
      ->capture_default_str();
  app.add_option("--epoch", *epoch,
                 "epoch or window id, tag (its epoch and the windows after it), or 'all' "
                 "(default: the newest; with --since/--until, every one)");
  AddTimeOptions(app, time);
  app.add_option("-e,--event", *events, "only these events (repeatable; default: all present)");
}

void AddTimeOptions(CLI::App& app, TimeFlags* time, bool twice) {
  const std::string again = twice ? " (twice: A, then B)" : "";
  auto* since = app.add_option(
      "--since", time->since,
      "only the windows and epochs that end after TIME, summed" + again +
          ": 2h (two hours ago), 30m, 1d, 2026-11-23T14:00 (local), 2026-11-23T14:00Z (UTC), "
          "2026-11-23 14:00+01:00, @UNIXSECONDS or now");
  auto* until = app.add_option(
      "--until", time->until,
      "only the windows and epochs that start before TIME" + again + " (same forms as --since)");
  since->expected(1)->multi_option_policy(twice ? CLI::MultiOptionPolicy::TakeAll
                                                : CLI::MultiOptionPolicy::TakeLast);
  until->expected(1)->multi_option_policy(twice ? CLI::MultiOptionPolicy::TakeAll
                                                : CLI::MultiOptionPolicy::TakeLast);
}

bool ParseTimeFlags(const std::string& tool, const TimeFlags& time, size_t index,
                    report::TimeRange* out) {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto one = [&](const char* flag, const std::vector<std::string>& given,
                 std::optional<int64_t>* value) {
    if (given.empty()) return true;
    const std::string& text = given[std::min(index, given.size() - 1)];
    auto t = ParseTimeSpec(text, now);
    if (!t) {
      std::fprintf(stderr, "%s: error: %s: %s\n", tool.c_str(), flag,
                   Printable(t.error().message()).c_str());
      return false;
    }
    *value = *t;
    return true;
  };
  return one("--since", time.since, &out->since) && one("--until", time.until, &out->until);
}

std::string Footer(const std::vector<std::string>& examples, const std::string& exit_status) {
  std::string out = "Examples:\n";
  for (const std::string& e : examples) out += "  " + e + "\n";
  return out + exit_status;
}

void AddOutputOptions(CLI::App& app, OutputFlags* flags, bool pprof) {
  std::vector<std::string> formats = {"text", "csv", "json", "html"};
  if (pprof) formats.push_back("pprof");
  app.add_option("--format", flags->format,
                 pprof ? "output format: text, csv, json, html or pprof (gzipped profile.proto "
                         "for go tool pprof; needs -o)"
                       : "output format: text, csv, json or html")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  app.add_option("-o,--output", flags->output, "write the report to FILE instead of stdout");
  app.add_option("--width", flags->width,
                 "text width in columns (default: the terminal's, else $COLUMNS, else 100)");
  app.add_flag("--no-header", flags->no_header, "text: leave out the '#' header lines");
}

void AddSourceAnyOption(CLI::App& app, bool* source_any) {
  app.add_flag("--source-any", *source_any,
               "read source files with your own rights; by default only files everyone may "
               "read are shown, since the image's author chose their paths");
}

void AddDebuginfoOptions(CLI::App& app, bool* no_debuginfod) {
  app.add_flag("--no-debuginfod", *no_debuginfod,
               "never fetch debug info from the debuginfod servers in $DEBUGINFOD_URLS (by "
               "default it is fetched, by build-id, for images without local symbols, and "
               "without DWARF for --source/--lines; timeout $DEBUGINFOD_TIMEOUT, else 10 s; "
               "per file at most $DEBUGINFOD_MAXTIME s, else 30, and $DEBUGINFOD_MAXSIZE "
               "bytes, else 1 GiB)");
}

void ConfigureDebuginfo(bool no_debuginfod) {
  SetDebuginfodTimeoutDefault();
  SetDebuginfodEnabled(!no_debuginfod);
}

const char* const kSymbolSourcesHelp =
    "Procedure names (and source lines) of a user image come from the file at its path:\n"
    ".symtab, else .dynsym plus MiniDebugInfo or a separate debug file, found by\n"
    "build-id (/usr/lib/debug/.build-id/), by .gnu_debuglink (beside the file, in\n"
    ".debug/, under /usr/lib/debug/<dir>), then from debuginfod ($DEBUGINFOD_URLS,\n"
    "cached in $DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client). Samples no\n"
    "symbol covers are shown as offset ranges (prog+0x10-0x2f).\n\n";

void AddFleetOptions(CLI::App& app, FleetFlags* flags) {
  auto* url = app.add_option(
      "--fleet", flags->url,
      "report over the fleet's ClickHouse (lcpi-ship's tables, or Distributed ones over its "
      "shards) at this HTTP URL instead of --db; a URL with a password belongs in "
      "--fleet-url-file (a command line is visible to every local user)");
  auto* file = app.add_option("--fleet-url-file", flags->url_file,
                              "--fleet's URL (with user:password@) read from FILE; refused if "
                              "others may read it");
  url->excludes(file);
  app.add_option("--database", flags->database, "with --fleet: the ClickHouse database")
      ->capture_default_str();
  app.add_option("--host", flags->hosts,
                 "with --fleet: only the windows of this host, as lcpi-ship named it "
                 "(repeatable: any of them)");
  app.add_option("--build-id", flags->build_ids,
                 "with --fleet: only the images of this build-id (lowercase hex; repeatable)");
}

std::unique_ptr<fleet::ClickHouseHttp> OpenFleet(const std::string& tool, const FleetFlags& flags) {
  std::string url = flags.url;
  if (!flags.url_file.empty()) {
    auto read = fleet::ReadUrlFile(flags.url_file);
    if (!read) {
      std::fprintf(stderr, "%s: error: %s\n", tool.c_str(),
                   Printable(read.error().message()).c_str());
      return nullptr;
    }
    url = *read;
  }
  auto ch = fleet::ClickHouseHttp::Create(url);
  if (!ch) {
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), Printable(ch.error().message()).c_str());
    return nullptr;
  }
  return std::move(*ch);
}

report::FleetSelection FleetSelectionOf(const FleetFlags& flags) {
  report::FleetSelection sel;
  sel.database = flags.database;
  sel.hosts = flags.hosts;
  sel.build_ids = flags.build_ids;
  return sel;
}

bool CheckFleetOnlyFlags(const std::string& tool, const FleetFlags& flags) {
  if (flags.given() || (flags.hosts.empty() && flags.build_ids.empty())) return true;
  std::fprintf(stderr, "%s: error: --host and --build-id select in the fleet: give --fleet URL\n",
               tool.c_str());
  return false;
}

std::unique_ptr<ProfileDb> OpenDb(const std::string& tool, const std::string& path) {
  auto db = ProfileDb::Open(path, DbMode::kReadOnly);
  if (db) return std::move(*db);
  std::string why;
  switch (db.error().code()) {
    case Errc::kNotFound:
      why = path + ": no such database (is lcpid running? give --db PATH)";
      break;
    case Errc::kNotADatabase:
      why = path + ": not a database (not an lcpi profile database)";
      break;
    default:
      why = db.error().ToString();
  }
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), why.c_str());
  return nullptr;
}

int Fail(const std::string& tool, const Error& error) {
  PrintWarnings(tool, {});
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), Printable(error.message()).c_str());
  return 1;
}

void PrintWarnings(const std::string& tool, const std::vector<std::string>& warnings) {
  std::vector<std::string> all = warnings;
  for (const std::string& w : DebuginfoWarnings()) {
    if (std::find(all.begin(), all.end(), w) == all.end()) all.push_back(w);
  }
  for (const std::string& w : all) {
    std::fprintf(stderr, "%s: warning: %s\n", tool.c_str(), Printable(w).c_str());
  }
}

int WriteOut(const std::string& tool, const std::string& report, const std::string& output) {
  // Names in a report come from other users' processes (command names,
  // paths): every renderer shows each one Printable (base/text.h), so a
  // line is a row. This pass over the whole report is the backstop: it
  // changes nothing in a rendered report (with keep_newlines, Printable keeps
  // the report's own line breaks and its escapes' backslashes), only what a
  // renderer forgot.
  std::string text = Printable(report, /*keep_newlines=*/true);
  if (!output.empty()) return WriteFile(tool, text, output);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int WriteFile(const std::string& tool, const std::string& bytes, const std::string& output,
              bool binary) {
  std::FILE* f = std::fopen(output.c_str(), "wb");
  bool ok = f != nullptr;
  if (f && binary && isatty(fileno(f))) {
    std::fclose(f);
    std::fprintf(stderr, "%s: error: %s is a terminal: binary output goes to a file\n",
                 tool.c_str(), Printable(output).c_str());
    return 1;
  }
  if (f) {
    ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok = std::fclose(f) == 0 && ok;
  }
  if (!ok) {
    std::fprintf(stderr, "%s: error: cannot write %s: %s\n", tool.c_str(),
                 Printable(output).c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

bool MakeRenderOptions(const std::string& tool, const OutputFlags& flags,
                       report::RenderOptions* options) {
  auto format = report::ParseFormat(flags.format);
  if (!format) {
    Fail(tool, format.error());
    return false;
  }
  options->format = *format;
  if (*format == report::Format::kPprof && flags.output.empty()) {
    std::fprintf(stderr,
                 "%s: error: --format pprof writes a binary file: give -o FILE (e.g. -o "
                 "lcpi.pb.gz)\n",
                 tool.c_str());
    return false;
  }
  options->width = report::OutputWidth(flags.width, STDOUT_FILENO);
  options->header = !flags.no_header;
  return true;
}

}  // namespace lcpi::tools
