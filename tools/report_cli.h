// report_cli.h - what the command lines of lcpiprof, lcpilist and lcpidiff
// share: the database option, opening it read-only with errors people can
// act on, the output options (--format, --width, --no-header, -o), and
// printing errors, warnings and the report.
#ifndef LCPI_TOOLS_REPORT_CLI_H
#define LCPI_TOOLS_REPORT_CLI_H

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "libprofile/base/control_protocol.h"
#include "libprofile/fleet/clickhouse_http.h"
#include "libprofile/image/debuginfo.h"
#include "libprofile/report/fleet_profile.h"
#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::tools {

// Where lcpid writes by default (kDefaultDatabase); $LCPI_DB overrides it.
std::string DefaultDb();

// --since and --until as typed; ParseTimeFlags reads them.
struct TimeFlags {
  std::vector<std::string> since, until;
};

// --db, --epoch, --since, --until and -e/--event, as lcpiprof and lcpilist
// take them (lcpidiff takes up to two databases, epochs and ranges).
void AddSourceOptions(CLI::App& app, std::string* db, std::string* epoch,
                      std::vector<std::string>* events, TimeFlags* time);
// --since/--until alone; `twice`: each may be given twice (A, then B).
void AddTimeOptions(CLI::App& app, TimeFlags* time, bool twice = false);
// The `index`-th --since/--until (the last given when fewer) as unix
// seconds, or false after printing "<tool>: error: --since: ..." (exit 2).
bool ParseTimeFlags(const std::string& tool, const TimeFlags& time, size_t index,
                    report::TimeRange* out);

// The --help footer: "Examples:" with one command a line, then the exit
// statuses (kExitStatus, or the tool's own).
std::string Footer(const std::vector<std::string>& examples, const std::string& exit_status);
inline constexpr const char* kExitStatus =
    "Exit status: 0 on success, 1 on an error (no database, not a database, no such\n"
    "epoch, event or image), 2 on a bad command line.";

struct OutputFlags {
  std::string format = "text";
  int width = 0;
  bool no_header = false;
  std::string output;  // -o FILE; "" is stdout
};
// --format, --width, --no-header, -o/--output. `pprof`: --format pprof is
// offered (lcpiprof only).
void AddOutputOptions(CLI::App& app, OutputFlags* flags, bool pprof = false);

// --source-any: read the source files an image's DWARF names with the
// caller's own rights, not only those everyone may read (docs/tools.md).
void AddSourceAnyOption(CLI::App& app, bool* source_any);

// Separate debug files from debuginfod (libprofile/image/debuginfo.h): on
// unless --no-debuginfod, and only when $DEBUGINFOD_URLS names a server.
void AddDebuginfoOptions(CLI::App& app, bool* no_debuginfod);
// After parsing: the switch, and DEBUGINFOD_TIMEOUT's default (10 s).
void ConfigureDebuginfo(bool no_debuginfod);
// What --help says about where procedure names come from.
extern const char* const kSymbolSourcesHelp;

// --fleet URL, --fleet-url-file FILE, --database, --host and --build-id:
// a report over the fleet's ClickHouse tables instead of --db.
struct FleetFlags {
  std::string url, url_file;
  std::string database = "lcpi";
  std::vector<std::string> hosts, build_ids;
  bool given() const { return !url.empty() || !url_file.empty(); }
};
void AddFleetOptions(CLI::App& app, FleetFlags* flags);
// The server of --fleet or --fleet-url-file (read as lcpi-ship reads its
// --url-file: refused if others may read it), or null after printing why
// (exit status 2: a bad command line, URL or file).
std::unique_ptr<fleet::ClickHouseHttp> OpenFleet(const std::string& tool, const FleetFlags& flags);
// --database, --host and --build-id as a fleet report's selection.
report::FleetSelection FleetSelectionOf(const FleetFlags& flags);
// False after printing why when --host or --build-id came without --fleet.
bool CheckFleetOnlyFlags(const std::string& tool, const FleetFlags& flags);

// Opens `path` read-only, or prints why not ("<tool>: <path>: not an lcpi
// database") and returns null.
std::unique_ptr<ProfileDb> OpenDb(const std::string& tool, const std::string& path);

// Prints "<tool>: error: ..." (after any debug-info warnings) and returns
// the exit status 1.
int Fail(const std::string& tool, const Error& error);

// Prints the warnings, then those of the debug-info lookups that are not
// among them (e.g. debuginfod failing while source lines were read).
void PrintWarnings(const std::string& tool, const std::vector<std::string>& warnings);

// Writes `text` to `output` (a file; "" is stdout), with control characters
// made printable; the exit status: 0, or 1 (with a message) when writing fails.
int WriteOut(const std::string& tool, const std::string& text, const std::string& output = "");
// Writes `bytes` unchanged to the file `output`; with `binary`, refuses a
// terminal (-o /dev/tty). The exit status: 0, or 1 with a message.
int WriteFile(const std::string& tool, const std::string& bytes, const std::string& output,
              bool binary = false);

// The end of every tool: a report that could not be built is an error
// (status 1); one that was has its warnings printed and is rendered.
template <class Report>
int PrintReport(const std::string& tool, const Expected<Report>& report,
                std::string (*render)(const Report&, const report::RenderOptions&),
                const report::RenderOptions& options, const std::string& output = "") {
  if (!report) return Fail(tool, report.error());
  PrintWarnings(tool, report->warnings);
  return WriteOut(tool, render(*report, options), output);
}

// Checks the format and fills the render options (width from the terminal).
// --format pprof without -o is refused (binary output is never written to a
// terminal or a pipe by accident).
bool MakeRenderOptions(const std::string& tool, const OutputFlags& flags,
                       report::RenderOptions* options);

}  // namespace lcpi::tools

#endif  // LCPI_TOOLS_REPORT_CLI_H
