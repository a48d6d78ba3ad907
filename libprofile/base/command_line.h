// command_line.h - parses a command line with CLI11 and turns its errors
// into the exit status every lcpi program documents.
#ifndef LCPI_LIBPROFILE_BASE_COMMAND_LINE_H
#define LCPI_LIBPROFILE_BASE_COMMAND_LINE_H

#include <optional>

#include <CLI/CLI.hpp>

namespace lcpi {

// Returns nothing when the program should go on, else its exit status:
// 0 after --help, 2 after a bad command line (the message is printed).
// CLI11's own statuses (105 for a bad value, 109 for an extra argument, ...)
// would tell a script only which of CLI11's classes the mistake fell in.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
}

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_BASE_COMMAND_LINE_H
