// fleet_profile.h - lcpiprof --fleet: lcpiprof's report (a Profile, so every
// renderer draws it unchanged) over the fleet's ClickHouse tables
// (libprofile/fleet/fleet_schema.h) instead of one host's database.
//
// The engine aggregates: every count is a sum ... GROUP BY in ClickHouse
// (as Float64: exact below 2^53, never wrapped) over the committed windows
// (the shipped_* views), per image and event, per label or process, and,
// for -p, per image, event and file offset; lcpiprof then names those
// offsets with the procedures shipped once per image identity (the
// fleet's `symbols`), grouped exactly as lcpiprof -p groups a local
// database's (profile_rows.h). Through a Distributed table
// (FleetDistributedStatements) the same queries read every shard.
//
// Every value from the command line (hosts, labels, build-ids, image
// filters) reaches SQL only as a string literal (fleet::SqlString) or a
// checked number; names come back hex-encoded, so any byte survives.
#ifndef LCPI_LIBPROFILE_REPORT_FLEET_PROFILE_H
#define LCPI_LIBPROFILE_REPORT_FLEET_PROFILE_H

#include <string>
#include <vector>

#include "libprofile/fleet/clickhouse_http.h"
#include "libprofile/report/pprof_profile.h"
#include "libprofile/report/report.h"

namespace lcpi::report {

struct FleetSelection {
  std::string database = "lcpi";       // checked by fleet::CheckDatabaseName
  std::vector<std::string> hosts;      // --host: only these (any of them); empty: all
  std::vector<std::string> build_ids;  // --build-id: only images of these builds (hex)
};

// The views a fleet report offers: images (with --label), procedures
// (-p, with -i and --build-id), labels (--by) and processes (-P, one row
// per host, pid and command). options.epoch must be empty (windows are
// chosen by --since/--until and --host). kNotFound: no window shipped in
// the selection; kIo / kInvalidArgument: the server's, as ClickHouseHttp.
Expected<Profile> BuildFleetProfile(fleet::ClickHouseHttp& ch, const FleetSelection& fleet,
                                    const ProfOptions& options);

// lcpiprof --fleet --format pprof: BuildPprof's profile (pprof_profile.h)
// over the fleet, per sampled offset of each image as -p sums them (so
// weighed by period), named with the shipped symbols; without stacks (not
// shipped) and source lines (no file at hand). Of options, the events,
// images (-i) and time range; its epoch must be empty.
Expected<PprofResult> BuildFleetPprof(fleet::ClickHouseHttp& ch, const FleetSelection& fleet,
                                      const ProfOptions& options);

// lcpidiff --fleet: A's time range against B's (DiffOptions::range_a,
// range_b), each a fleet profile of the same selection, compared as
// BuildDiff compares two databases' (by image path, and procedure).
Expected<Diff> BuildFleetDiff(fleet::ClickHouseHttp& ch, const FleetSelection& fleet,
                              const DiffOptions& options);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_FLEET_PROFILE_H
