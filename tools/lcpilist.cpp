// lcpilist.cpp - lcpilist, the instruction-level listing (DCPI's dcpilist):
// one procedure, or an address range, instruction by instruction with each
// event's samples and share of the procedure, disassembled by Capstone from
// the image on disk, optionally with source lines (libdw). See docs/tools.md.
#include <cstdio>

#include "libprofile/base/command_line.h"
#include "report_cli.h"

int main(int argc, char** argv) {
  using namespace lcpi;
  const std::string tool = "lcpilist";
  CLI::App app{"lcpilist: samples per instruction of one procedure"};
  std::string db_path = tools::DefaultDb();
  std::string range;
  report::ListOptions opts;
  tools::OutputFlags out;
  bool no_debuginfod = false;
  tools::TimeFlags time;
  app.add_option("procedure", opts.procedure, "the procedure (function symbol) to list");
  app.add_option("image", opts.image,
                 "the image holding it: a part of its path, or its identity (default: any)");
  tools::AddSourceOptions(app, &db_path, &opts.epoch, &opts.events, &time);
  app.add_option("--range", range,
                 "IMAGE:START-END instead of a procedure (hex addresses as listed)");
  app.add_flag("--source", opts.source, "interleave the source lines (needs -g)");
  app.add_flag("--lines", opts.lines, "one row per source line instead of per instruction");
  tools::AddSourceAnyOption(app, &opts.source_any);
  tools::AddOutputOptions(app, &out);
  tools::AddDebuginfoOptions(app, &no_debuginfod);
  app.footer(
      std::string(tools::kSymbolSourcesHelp) +
      tools::Footer(
          {"lcpilist hot_loop                     the procedure in whichever image has it",
           "lcpilist memcpy libc.so --source      with source lines interleaved",
           "lcpilist main /usr/bin/myprog --lines samples per source line",
           "lcpilist --range /usr/bin/myprog:0x1130-0x1190",
           "lcpilist hot_loop --since 2h           over the windows of the last two hours"},
          "Exit status: 0 on success (warnings, e.g. an image rebuilt since it was profiled,\n"
          "go to stderr), 1 on an error (no database, not a database, no such epoch, image\n"
          "or procedure), 2 on a bad command line."));
  if (std::optional<int> status = lcpi::ParseCommandLine(app, argc, argv)) return *status;
  tools::ConfigureDebuginfo(no_debuginfod);
  if (!tools::ParseTimeFlags(tool, time, 0, &opts.range)) return 2;
  if (!range.empty()) {
    if (!opts.procedure.empty()) {
      std::fprintf(stderr, "%s: error: give a procedure or --range, not both\n", tool.c_str());
      return 2;
    }
    auto ok = report::ParseRange(range, &opts);
    if (!ok) {
      tools::Fail(tool, ok.error());
      return 2;
    }
  } else if (opts.procedure.empty()) {
    std::fprintf(stderr, "%s: error: name a procedure, or give --range (see --help)\n",
                 tool.c_str());
    return 2;
  }
  report::RenderOptions ro;
  if (!tools::MakeRenderOptions(tool, out, &ro)) return 2;
  auto db = tools::OpenDb(tool, db_path);
  if (!db) return 1;
  return tools::PrintReport(tool, report::BuildListing(*db, opts), report::RenderListing, ro,
                            out.output);
}
