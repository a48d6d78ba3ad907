// profile_db_stacks.cpp - a merge's call stacks: each distinct stack stored
// once in `stacks` under its hash (stack_codec.h), a collision probing the
// next ids, and the window's samples of it added in `stack_counts`.
#include <sqlite3.h>

#include <cstring>

#include "libprofile/base/saturating.h"
#include "libprofile/store/profile_db.h"
#include "libprofile/store/profile_db_sql.h"
#include "libprofile/store/stack_codec.h"

namespace lcpi {
namespace {

constexpr const char kSqlStackFrames[] = "SELECT frames FROM stacks WHERE id = ?1";
constexpr const char kSqlInsertStack[] = "INSERT INTO stacks (id, frames) VALUES (?1, ?2)";
constexpr const char kSqlUpsertStackCount[] =
    "INSERT INTO stack_counts (epoch_id, stack_id, count) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (epoch_id, stack_id) DO UPDATE SET count = count + excluded.count";
// Ids probed past a collision: 64-bit hashes of distinct stacks collide
// about never; a run of 16 taken ids is a damaged or hostile table.
constexpr int kMaxProbes = 16;

}  // namespace

Expected<void> ProfileDb::MergeStacks(const MergeBatch& b, const std::vector<int64_t>& image_ids,
                                      const std::vector<bool>& quarantine, int64_t* skipped) {
  if (b.stacks.empty()) return {};
  auto find = Prepare(kSqlStackFrames);
  if (!find) return find.error();
  auto insert = Prepare(kSqlInsertStack);
  if (!insert) return insert.error();
  auto count = Prepare(kSqlUpsertStackCount);
  if (!count) return count.error();
  std::vector<StackFrame> frames;
  for (const StackRow& st : b.stacks) {
    if (st.count == 0) continue;
    bool held = false;
    frames.clear();
    for (const auto& [image, offset] : st.frames) {
      if (quarantine[image]) held = true;
      frames.emplace_back(image_ids[image], offset);
    }
    if (held) {
      // Its samples (each count at most INT64_MAX: ValidateBatch), summed up to it.
      *skipped = SaturatingAdd(*skipped, static_cast<int64_t>(st.count));
      continue;
    }
    const std::string blob = EncodeStack(st.end, frames);
    int64_t id = StackId(blob);
    bool found = false;
    for (int probe = 0; probe < kMaxProbes && !found; probe++, id = id == INT64_MAX ? 1 : id + 1) {
      sql::Reset reset(*find);
      sql::Bind(*find, 1, id);
      int rc = sqlite3_step(*find);
      if (rc == SQLITE_ROW) {
        auto size = static_cast<size_t>(sqlite3_column_bytes(*find, 0));
        const void* bytes = sqlite3_column_blob(*find, 0);
        if (size == blob.size() && bytes && std::memcmp(bytes, blob.data(), size) == 0)
          found = true;
        continue;
      }
      if (rc != SQLITE_DONE) return SqlError(rc, "merge: call stacks");
      sql::Reset reset_insert(*insert);
      sql::Bind(*insert, 1, id);
      sqlite3_bind_blob(*insert, 2, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
      if (rc = sqlite3_step(*insert); rc != SQLITE_DONE) return SqlError(rc, "merge: call stacks");
      found = true;
    }
    if (!found)
      return Error(Errc::kCorrupt, path_ +
                                       ": merge: the call stack table is full of "
                                       "colliding ids");
    // The loop stepped past the id it found.
    id = id == 1 ? INT64_MAX : id - 1;
    sql::Reset reset(*count);
    sql::Bind(*count, 1, b.epoch);
    sql::Bind(*count, 2, id);
    sql::Bind(*count, 3, static_cast<int64_t>(st.count));
    if (int rc = sqlite3_step(*count); rc != SQLITE_DONE)
      return SqlError(rc, "merge: call stack counts");
  }
  return {};
}

}  // namespace lcpi
