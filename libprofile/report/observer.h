// observer.h - the samples lcpi took of itself, on a line of their own
// ("[lcpi: observer]") in every lcpiprof view, kept, not hidden: they are
// what observing cost, beside the header's estimate (observer_cost.h).
// Decided at report time from what is stored, so older databases get it too
// (docs/tools.md, "The observer line"):
//
//  - lcpid's own processes: the (window, pid) pairs lcpid stored
//    (observer_pids), each pid in its own window only (a pid reused in
//    another window is someone else's); a window without a pair (written
//    before schema 7) has no observer process, whatever a command is named;
//  - lcpid's executable, by the identity lcpid stored per window
//    (observer_images, schema 8; never by a file's name: a user's ~/bin/lcpid
//    is not lcpid), and lcpi.ko (the module image [lcpi]), wholly;
//  - the kernel's sampling path: the perf interrupt and overflow functions
//    (IsObserverSymbol), whichever process they interrupted.
//
// Per view: procedures move those images' procedures and the sampling-path
// functions; processes move lcpid's pids; images move the two images, the
// sampling-path functions' samples out of the kernel's row and lcpid's
// processes' samples out of every other image's row. A sampling-path sample
// taken while lcpid itself ran is moved twice from the kernel's row in the
// image view (the store keeps offsets per image, not per process): the
// totals stay exact, the kernel row is lower by those few. The label view
// is by cgroup and keeps lcpid under its own unit.
#ifndef LCPI_LIBPROFILE_REPORT_OBSERVER_H
#define LCPI_LIBPROFILE_REPORT_OBSERVER_H

#include <string_view>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/report/report.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::report {

inline constexpr const char kObserverLine[] = "[lcpi: observer]";

// A kernel function of the sampling path: perf's overflow handling, the
// software-event hrtimer, the PMU drivers' interrupt handlers, and lcpi.ko's
// handler.
bool IsObserverSymbol(std::string_view name);

// Moves the observer's samples of `rows` (built for `view` from `h`) into
// one row named kObserverLine, appended when it has any. labelled: the
// image view was built from process rows (a --label filter), which hold no
// offsets: only lcpid's processes and the two images move.
Expected<void> AttributeObserver(ProfileDb& db, const Header& h, View view, bool labelled,
                                 std::vector<Row>* rows);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_OBSERVER_H
