// merge_writer.h - the thread that writes merge batches into the database,
// so lcpid's loop keeps draining the rings while SQLite works (a merge of a
// million entries takes seconds; a perf ring at 5,000 samples/s holds less).
// One batch at a time: the loop fills the next one meanwhile. A batch whose
// write failed comes back to the caller, which submits it again first.
//
// The database connection is used by this thread only while a batch is in
// flight (between Submit and Poll/Wait returning it); the loop uses the
// same connection (NewEpoch, retention, status) only when busy() is false.
// The mutex and condition variable hand the connection over.
#ifndef LCPI_DAEMON_MERGE_WRITER_H
#define LCPI_DAEMON_MERGE_WRITER_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "libprofile/store/profile_db.h"

namespace lcpi {

class MergeWriter {
 public:
  // A finished write. On failure `batch` is the batch, untouched, to submit
  // again (unless the error says it never can be: kInvalidArgument); on
  // success it is empty, and `report` says what the store set aside.
  struct Done {
    Expected<void> result;
    MergeBatch batch;
    MergeReport report;
    uint64_t ms = 0;  // how long ProfileDb::Merge took
  };

  explicit MergeWriter(ProfileDb& db);
  ~MergeWriter();  // waits for the batch in flight
  MergeWriter(const MergeWriter&) = delete;
  MergeWriter& operator=(const MergeWriter&) = delete;

  // Starts writing `batch`. Only when !busy().
  void Submit(MergeBatch batch);
  // A batch is in flight or finished but not yet collected.
  bool busy() const { return busy_; }
  // The finished write, if the batch in flight is done; never blocks.
  std::optional<Done> Poll();
  // Waits for the batch in flight. Only when busy().
  Done Wait();

  uint64_t last_ms() const { return last_ms_; }
  uint64_t max_ms() const { return max_ms_; }

 private:
  void Loop();
  Done Collect();  // with mu_ held and done_ set

  ProfileDb& db_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<MergeBatch> todo_;  // handed to the thread
  std::optional<Done> done_;        // handed back
  bool quit_ = false;
  bool busy_ = false;  // the loop's view: touched by the loop's thread only
  // LCPI_TEST_REFUSE_MERGES=N, for tests only (lcpid's environment is
  // root's): the first N batches holding rows are refused as the store
  // refuses a batch for its content, which otherwise only an lcpid bug
  // does, so that reliability_test reaches what lcpid does then.
  uint64_t refuse_left_ = 0;  // the writer thread's
  uint64_t last_ms_ = 0, max_ms_ = 0;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace lcpi

#endif  // LCPI_DAEMON_MERGE_WRITER_H
