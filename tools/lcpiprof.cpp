// lcpiprof.cpp - lcpiprof, the summary report (DCPI's dcpiprof): where the
// samples of an epoch went, per image (default), per procedure (-p) or per
// process (-P), for every event. Reads the database read-only; never needs
// root. See docs/tools.md.
#include <cstdio>

#include "libprofile/base/command_line.h"
#include "libprofile/report/callers.h"
#include "libprofile/report/html_page.h"
#include "libprofile/report/pprof_profile.h"
#include "report_cli.h"

namespace {

lcpi::report::PprofOptions PprofOptionsOf(const lcpi::report::ProfOptions& opts) {
  lcpi::report::PprofOptions po;
  po.epoch = opts.epoch;
  po.events = opts.events;
  po.images = opts.images;
  po.range = opts.range;
  return po;
}

// The profile encoded and gzipped, to the output; its warnings first.
int WritePprof(const std::string& tool, const lcpi::Expected<lcpi::report::PprofResult>& profile,
               const std::string& output) {
  if (!profile) return lcpi::tools::Fail(tool, profile.error());
  lcpi::tools::PrintWarnings(tool, profile->warnings);
  auto bytes = lcpi::report::PprofBytes(profile->profile);
  if (!bytes) return lcpi::tools::Fail(tool, bytes.error());
  return lcpi::tools::WriteFile(tool, *bytes, output, /*binary=*/true);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lcpi;
  const std::string tool = "lcpiprof";
  CLI::App app{"lcpiprof: where the samples went, per image, procedure or process"};
  std::string db_path = tools::DefaultDb();
  report::ProfOptions opts;
  bool procedures = false, processes = false;
  tools::OutputFlags out;
  bool no_debuginfod = false;
  tools::TimeFlags time;
  bool list_epochs = false;
  bool source_any = false;
  tools::AddSourceOptions(app, &db_path, &opts.epoch, &opts.events, &time);
  auto* epochs_flag = app.add_flag(
      "--epochs", list_epochs,
      "list what is stored instead: each epoch and window, its kind, tag, span, times, "
      "samples and stored rows (text, csv, json or html)");
  app.add_option("--sort", opts.sort, "sort by this event (default: the first)");
  app.add_option("--keep", opts.keep_percent,
                 "only rows with at least this percent of the sort event")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--top", opts.top, "at most this many rows");
  app.add_flag("--observer-inline", opts.observer_inline,
               "leave lcpi's own samples (lcpid's, the sampling path's) where they fell instead "
               "of on the [lcpi: observer] line, as --fleet shows them");
  auto* p = app.add_flag("-p,--procedures", procedures, "per procedure instead of per image");
  auto* P = app.add_flag("-P,--processes", processes, "per process (command and pid)");
  p->excludes(P);
  std::vector<std::string> labels;
  auto* by = app.add_option(
      "--by", opts.by,
      "per unit, container, pod or cgroup (what each process's cgroup is called); with -P, "
      "per process with that column");
  auto* label = app.add_option(
      "--label", labels,
      "only the processes whose cgroup has this label, KEY=VALUE (unit=nginx.service, "
      "container=ID or its first 12 digits or more, pod=UID, cgroup=PATH; repeatable: all must "
      "hold); with the image view (the default), -P or --by");
  by->excludes(p);
  label->excludes(p);
  epochs_flag->excludes(p)->excludes(P)->excludes(by)->excludes(label);
  app.add_option("-i,--image", opts.images,
                 "with -p or --format pprof: only images whose path contains this, or with "
                 "this identity (repeatable)");
  std::string callers, callees;
  auto* callers_opt = app.add_option(
      "--callers", callers,
      "of the call stacks through procedure SYM (named as -p names it), the share through each "
      "immediate caller (lcpid --stack-frequency)");
  auto* callees_opt =
      app.add_option("--callees", callees,
                     "likewise, the share through each procedure SYM calls ([self]: SYM "
                     "was the sampled procedure)");
  callers_opt->excludes(callees_opt)
      ->excludes(p)
      ->excludes(P)
      ->excludes(by)
      ->excludes(label)
      ->excludes(epochs_flag);
  callees_opt->excludes(p)->excludes(P)->excludes(by)->excludes(label)->excludes(epochs_flag);
  tools::FleetFlags fleet;
  tools::AddFleetOptions(app, &fleet);
  tools::AddOutputOptions(app, &out, /*pprof=*/true);
  tools::AddDebuginfoOptions(app, &no_debuginfod);
  tools::AddSourceAnyOption(app, &source_any);
  app.footer(
      std::string(tools::kSymbolSourcesHelp) +
      "--format pprof -o FILE writes the selection (--epoch, -e, -i) as a gzipped\n"
      "profile.proto for go tool pprof: per event the sample types <event>_samples\n"
      "(count) and <event> (samples x mean period; nanoseconds for cpu-clock), one\n"
      "location per sampled offset (address = file offset in the image), functions\n"
      "named as -p names them. -p is implied; -P, --sort, --keep and --top do not apply.\n"
      "Over --fleet: the fleet's windows, weighed by period as -p, named with the\n"
      "shipped symbols, without call stacks or source lines.\n\n" +
      tools::Footer(
          {"lcpiprof                          images of the newest epoch, by the first event",
           "lcpiprof -p --top 20              the 20 hottest procedures",
           "lcpiprof -p -i libc.so --keep 1   procedures of libc with at least 1% each",
           "lcpiprof -P --epoch all           per process, over every epoch",
           "lcpiprof --by unit                per systemd unit (--by container: per container)",
           "lcpiprof -P --label unit=nginx.service   the processes of one unit",
           "lcpiprof --label container=3f1c2a9b8e7d  the images one container ran",
           "lcpiprof --callers memcpy         who called memcpy, from the call stacks",
           "lcpiprof --epochs                 the epochs and windows stored, with their times",
           "lcpiprof --since 2h               the windows of the last two hours, summed",
           "lcpiprof --since 2026-11-23T14:00 --until 2026-11-23T15:00Z",
           "lcpiprof --epoch before-upgrade --sort imiss --format json",
           "lcpiprof --epoch all --format pprof -o lcpi.pb.gz && go tool pprof -top lcpi.pb.gz",
           "lcpiprof --epoch all --format html -o profile.html   one page to open in a browser",
           "lcpiprof --fleet-url-file ~/.lcpi-fleet -p -i libc.so.6 --since 7d --build-id HEX",
           "                                  libc's procedures of one build, every host, a week"},
          tools::kExitStatus));
  if (std::optional<int> status = lcpi::ParseCommandLine(app, argc, argv)) return *status;
  tools::ConfigureDebuginfo(no_debuginfod);
  if (!tools::ParseTimeFlags(tool, time, 0, &opts.range)) return 2;
  const bool pprof = out.format == "pprof";
  if (pprof && processes) {
    std::fprintf(stderr, "%s: error: --format pprof has no per-process view (-P)\n", tool.c_str());
    return 2;
  }
  if (pprof && (!opts.by.empty() || !labels.empty())) {
    std::fprintf(stderr,
                 "%s: error: --format pprof takes no --by or --label: its counts per offset are "
                 "stored per image, not per process\n",
                 tool.c_str());
    return 2;
  }
  for (const std::string& text : labels) {
    auto l = report::ParseLabel(text);
    if (!l) {
      std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), l.error().message().c_str());
      return 2;
    }
    opts.labels.push_back(*l);
  }
  if (!opts.images.empty() && !procedures && !pprof) {
    std::fprintf(stderr, "%s: error: -i/--image needs -p\n", tool.c_str());
    return 2;
  }
  opts.view = procedures         ? report::View::kProcedures
              : processes        ? report::View::kProcesses
              : !opts.by.empty() ? report::View::kLabels
                                 : report::View::kImages;
  report::RenderOptions ro;
  if (!tools::MakeRenderOptions(tool, out, &ro)) return 2;
  if (list_epochs && (pprof || !opts.epoch.empty() || !opts.range.empty())) {
    std::fprintf(stderr,
                 "%s: error: --epochs lists everything stored; it takes no --epoch, "
                 "--since, --until or --format pprof\n",
                 tool.c_str());
    return 2;
  }
  if ((!callers.empty() || !callees.empty()) && pprof) {
    std::fprintf(stderr, "%s: error: --callers and --callees print text, csv, json or html\n",
                 tool.c_str());
    return 2;
  }
  if (fleet.given()) {
    // Not yet over the fleet: what reads call stacks (not shipped) and the
    // epoch list from a local database.
    const char* local = !callers.empty() || !callees.empty() ? "--callers and --callees"
                        : list_epochs                        ? "--epochs"
                                                             : nullptr;
    if (local) {
      std::fprintf(stderr,
                   "%s: error: %s is not yet available over --fleet (it reads one host's "
                   "database: give --db); --fleet gives the image, procedure (-p), process "
                   "(-P) and label (--by) views in text, csv, json and html, and pprof\n",
                   tool.c_str(), local);
      return 2;
    }
    auto ch = tools::OpenFleet(tool, fleet);
    if (!ch) return 2;
    if (pprof) {
      return WritePprof(tool, report::BuildFleetPprof(*ch, tools::FleetSelectionOf(fleet), opts),
                        out.output);
    }
    return tools::PrintReport(tool,
                              report::BuildFleetProfile(*ch, tools::FleetSelectionOf(fleet), opts),
                              report::RenderProfile, ro, out.output);
  }
  if (!tools::CheckFleetOnlyFlags(tool, fleet)) return 2;
  auto db = tools::OpenDb(tool, db_path);
  if (!db) return 1;
  if (!callers.empty() || !callees.empty()) {
    report::CallersOptions co;
    co.epoch = opts.epoch;
    co.range = opts.range;
    co.symbol = callers.empty() ? callees : callers;
    co.callees = !callees.empty();
    co.top = opts.top;
    return tools::PrintReport(tool, report::BuildCallers(*db, co), report::RenderCallers, ro,
                              out.output);
  }
  if (list_epochs) {
    return tools::PrintReport(tool, report::BuildEpochList(*db), report::RenderEpochList, ro,
                              out.output);
  }
  if (pprof) return WritePprof(tool, report::BuildPprof(*db, PprofOptionsOf(opts)), out.output);
  if (ro.format == report::Format::kHtml && opts.by.empty() && opts.labels.empty()) {
    // One page of several reports: images, procedures, processes, listings.
    report::HtmlOptions html;
    html.prof = opts;
    html.source_any = source_any;
    return tools::PrintReport(tool, report::BuildHtmlReport(*db, html), report::RenderHtmlReport,
                              ro, out.output);
  }
  return tools::PrintReport(tool, report::BuildProfile(*db, opts), report::RenderProfile, ro,
                            out.output);
}
