// lcpidiff.cpp - lcpidiff: two profiles side by side (two epochs of one
// database, two databases, or two time ranges of the fleet), per image or
// per procedure, as shares of one event, sorted by the largest change. See
// docs/tools.md.
#include <cstdio>

#include "libprofile/base/command_line.h"
#include "libprofile/report/callers.h"
#include "report_cli.h"

int main(int argc, char** argv) {
  using namespace lcpi;
  const std::string tool = "lcpidiff";
  CLI::App app{"lcpidiff: what changed between two epochs, two databases or two time ranges"};
  std::vector<std::string> dbs;
  std::vector<std::string> epochs;
  report::DiffOptions opts;
  bool procedures = false;
  tools::OutputFlags out;
  bool no_debuginfod = false;
  tools::TimeFlags time;
  app.add_option("--db", dbs,
                 "database; once for both sides, or twice: A then B "
                 "(default: $LCPI_DB, else /var/lib/lcpi/profiles.db)");
  app.add_option("--epoch", epochs,
                 "epoch id, tag or 'all'; twice: A then B (default: the newest of each "
                 "database, or with one database the two newest epochs)");
  tools::AddTimeOptions(app, &time, /*twice=*/true);
  app.add_option("-e,--event", opts.event, "the event compared (default: the first in both)");
  auto* p_flag = app.add_flag("-p,--procedures", procedures, "per procedure instead of per image");
  auto* callers_opt = app.add_option(
      "--callers", opts.symbol,
      "the callers of this procedure (named as -p names it) in A's and B's call stacks, as "
      "shares of the stack samples through it");
  std::string callees;
  auto* callees_opt =
      app.add_option("--callees", callees, "the callees of this procedure, as --callers");
  callers_opt->excludes(callees_opt);
  app.add_option("-i,--image", opts.images, "with -p: only these images (path part or identity)");
  app.add_option("--keep", opts.keep_points,
                 "only rows whose share moved by at least this many points");
  app.add_option("--top", opts.top, "at most this many rows");
  tools::AddOutputOptions(app, &out);
  tools::AddDebuginfoOptions(app, &no_debuginfod);
  tools::FleetFlags fleet;
  tools::AddFleetOptions(app, &fleet);
  app.footer(std::string(tools::kSymbolSourcesHelp) +
             tools::Footer({"lcpidiff --epoch before-upgrade --epoch after-upgrade",
                            "lcpidiff -p --top 20 --epoch 3 --epoch 4",
                            "lcpidiff --db old.db --db new.db -p -i myprog",
                            "lcpidiff --callers memcpy --epoch 3 --epoch 4   whose memcpy grew",
                            "lcpidiff --since 2d --until 1d --since 1d    yesterday against today",
                            "lcpidiff --fleet-url-file ~/.lcpi-fleet -p -i libc.so.6 --since 14d "
                            "--until 7d --since 7d   the fleet's last week against the week "
                            "before"},
                           tools::kExitStatus));
  if (std::optional<int> status = lcpi::ParseCommandLine(app, argc, argv)) return *status;
  tools::ConfigureDebuginfo(no_debuginfod);
  if (!callees.empty()) {
    opts.symbol = callees;
    opts.callees = true;
  }
  if (!opts.symbol.empty() && (*p_flag || !opts.event.empty())) {
    std::fprintf(stderr, "%s: error: --callers and --callees compare stacks: not with -p or -e\n",
                 tool.c_str());
    return 2;
  }
  (void)callers_opt;
  if (dbs.size() > 2 || epochs.size() > 2 || time.since.size() > 2 || time.until.size() > 2) {
    std::fprintf(stderr, "%s: error: at most two --db, --epoch, --since and --until\n",
                 tool.c_str());
    return 2;
  }
  if (!tools::ParseTimeFlags(tool, time, 0, &opts.range_a) ||
      !tools::ParseTimeFlags(tool, time, 1, &opts.range_b)) {
    return 2;
  }
  // A second --since or --until sets B's alone: "--since 2d --until 1d
  // --since 1d" is A = two days ago to one day ago, B = the last day.
  if (time.until.size() == 1 && time.since.size() == 2) opts.range_b.until.reset();
  if (time.since.size() == 1 && time.until.size() == 2) opts.range_b.since.reset();
  const bool by_time = !opts.range_a.empty() || !opts.range_b.empty();
  opts.view = procedures ? report::View::kProcedures : report::View::kImages;
  report::RenderOptions ro;
  if (!tools::MakeRenderOptions(tool, out, &ro)) return 2;
  if (fleet.given()) {
    // The fleet has windows, not epochs: its two sides are two time ranges.
    if (!dbs.empty() || !epochs.empty() || !opts.symbol.empty() || !by_time) {
      std::fprintf(stderr,
                   "%s: error: --fleet compares two time ranges of the fleet's windows: give "
                   "--since/--until (a second --since or --until sets B's), not --db, --epoch, "
                   "--callers or --callees\n",
                   tool.c_str());
      return 2;
    }
    if (opts.range_a.since == opts.range_b.since && opts.range_a.until == opts.range_b.until)
      std::fprintf(stderr, "%s: warning: comparing a time range with itself\n", tool.c_str());
    auto ch = tools::OpenFleet(tool, fleet);
    if (!ch) return 2;
    return tools::PrintReport(tool,
                              report::BuildFleetDiff(*ch, tools::FleetSelectionOf(fleet), opts),
                              report::RenderDiff, ro, out.output);
  }
  if (!tools::CheckFleetOnlyFlags(tool, fleet)) return 2;
  if (dbs.empty()) dbs.push_back(tools::DefaultDb());
  auto db_a = tools::OpenDb(tool, dbs[0]);
  if (!db_a) return 1;
  std::unique_ptr<ProfileDb> db_b_owned;
  if (dbs.size() == 2) {
    db_b_owned = tools::OpenDb(tool, dbs[1]);
    if (!db_b_owned) return 1;
  }
  ProfileDb& db_b = db_b_owned ? *db_b_owned : *db_a;
  if (epochs.size() == 2) {
    opts.epoch_a = epochs[0];
    opts.epoch_b = epochs[1];
  } else if (epochs.size() == 1) {
    opts.epoch_a = opts.epoch_b = epochs[0];
  } else if (!db_b_owned && !by_time) {
    // One database, no epochs: the two newest.
    auto list = db_a->ListEpochs();
    if (!list) return tools::Fail(tool, list.error());
    if (list->size() < 2) {
      std::fprintf(stderr, "%s: error: %s has fewer than two epochs; give --epoch twice\n",
                   tool.c_str(), dbs[0].c_str());
      return 1;
    }
    opts.epoch_a = std::to_string((*list)[list->size() - 2].id);
    opts.epoch_b = std::to_string(list->back().id);
  }
  if (dbs.size() == 1 && opts.epoch_a == opts.epoch_b && opts.range_a.since == opts.range_b.since &&
      opts.range_a.until == opts.range_b.until) {
    std::fprintf(stderr, "%s: warning: comparing epoch %s with itself\n", tool.c_str(),
                 opts.epoch_a.empty() ? "(newest)" : opts.epoch_a.c_str());
  }
  return tools::PrintReport(tool,
                            opts.symbol.empty() ? report::BuildDiff(*db_a, db_b, opts)
                                                : report::BuildCallersDiff(*db_a, db_b, opts),
                            report::RenderDiff, ro, out.output);
}
