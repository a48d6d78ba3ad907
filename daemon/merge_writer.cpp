// merge_writer.cpp - one thread, one batch at a time.
#include "daemon/merge_writer.h"

#include <cstdlib>

#include "libprofile/aggregate/held_batch.h"
#include "libprofile/base/text.h"

namespace lcpi {

MergeWriter::MergeWriter(ProfileDb& db) : db_(db), thread_([this] { Loop(); }) {}

namespace {

uint64_t MergesToRefuse() {
  const char* n = std::getenv("LCPI_TEST_REFUSE_MERGES");
  return n ? ParseDecimal(n).value_or(0) : 0;
}

}  // namespace

MergeWriter::~MergeWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();  // after the batch in flight: a merge is one transaction
}

void MergeWriter::Submit(MergeBatch batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    todo_ = std::move(batch);
  }
  busy_ = true;
  cv_.notify_all();
}

void MergeWriter::Loop() {
  refuse_left_ = MergesToRefuse();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return quit_ || todo_; });
    if (!todo_) return;  // quitting with nothing to write
    MergeBatch batch = std::move(*todo_);
    todo_.reset();
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    MergeReport report;
    Expected<void> merged;
    if (refuse_left_ > 0 && HoldsRows(batch)) {
      refuse_left_--;
      merged = Error(Errc::kInvalidArgument, "merge: refused for LCPI_TEST_REFUSE_MERGES");
    } else {
      merged = db_.Merge(batch, &report);
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    Done done{merged, {}, report, static_cast<uint64_t>(ms.count())};
    if (merged)
      batch = MergeBatch();  // freed here, off the loop
    else
      done.batch = std::move(batch);  // back to the caller, to be retried
    lock.lock();
    done_ = std::move(done);
    cv_.notify_all();
  }
}

MergeWriter::Done MergeWriter::Collect() {
  Done d = std::move(*done_);
  done_.reset();
  busy_ = false;
  last_ms_ = d.ms;
  if (d.ms > max_ms_) max_ms_ = d.ms;
  return d;
}

std::optional<MergeWriter::Done> MergeWriter::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!done_) return std::nullopt;
  return Collect();
}

MergeWriter::Done MergeWriter::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_.has_value(); });
  return Collect();
}

}  // namespace lcpi
