// jit_maps.cpp - watching JIT processes and naming their code from perf maps.
#include "libprofile/attribute/jit_maps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <memory>

#include <spdlog/spdlog.h>

#include "libprofile/base/proc_start.h"
#include "libprofile/base/text.h"

namespace lcpi {

JitMaps::JitMaps(ImageTable& images, std::string proc, PerfMapLimits limits, uint64_t name_budget)
    : images_(images), proc_(std::move(proc)), limits_(limits), name_budget_(name_budget) {
  std::ifstream in(proc_ + "/sys/kernel/random/boot_id");
  std::getline(in, boot_id_);
  if (boot_id_.empty()) boot_id_ = "unknown-boot";
}

JitMaps::~JitMaps() {
  for (Process& p : processes_) Close(p);
}

void JitMaps::Close(Process& p) {
  if (p.root_fd < 0) return;
  close(p.root_fd);
  p.root_fd = -1;
  open_roots_--;
}

Expected<JitMaps::ProcessRoot> JitMaps::OpenRoot(const std::string& proc, uint32_t pid) {
  std::string base = proc + "/" + std::to_string(pid);
  struct stat st;
  if (stat(base.c_str(), &st) != 0) return ErrnoError(base, errno);  // gone already
  ProcessRoot r;
  r.uid = st.st_uid;
  r.start_ticks = StartTicks(base + "/stat");
  // O_PATH: nothing is opened for reading, and a descriptor of a directory
  // keeps its mount usable after the process and its namespace are gone.
  r.root.reset(open((base + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (r.root.get() < 0) return ErrnoError(base + "/root", errno);
  if (r.start_ticks.empty()) return Error(Errc::kNotFound, base + "/stat: no start time");
  return r;
}

void JitMaps::StartOpen(uint32_t pid, bool then_read, uint64_t now) {
  auto [it, fresh] = opening_.try_emplace(pid);
  if (then_read && !it->second.then_read) {
    it->second.then_read = true;
    it->second.asked_at = now;
  }
  if (!fresh) return;  // under way: it reads as well, if asked to now
  if (open_roots_ + opening_.size() > kMaxLiveProcesses) {
    stats_.refused++;
    FinishOpen(pid, Error(Errc::kFull, "too many processes watched"));
    return;
  }
  RunLookup<ProcessRoot>(
      lookups_, [proc = proc_, pid] { return OpenRoot(proc, pid); },
      [this, pid](Expected<ProcessRoot> root) { FinishOpen(pid, std::move(root)); });
}

void JitMaps::FinishOpen(uint32_t pid, Expected<ProcessRoot> root) {
  Opening o = opening_.at(pid);
  opening_.erase(pid);
  if (!root) {
    // A process that was running before lcpid, or one gone before it was
    // watched: tried again no more often than a map is re-read.
    if (o.then_read) failed_[pid] = o.asked_at;
    if (o.then_read && on_read_) on_read_(pid);
    return;
  }
  Process& p = processes_.emplace_back();
  p.pid = pid;
  p.uid = root->uid;
  p.root_fd = root->root.release();
  open_roots_++;
  p.identity = "jit:" + boot_id_ + ":" + std::to_string(pid) + ":" + root->start_ticks;
  p.start_ticks = root->start_ticks;
  by_pid_[pid] = &p;
  failed_.erase(pid);
  if (auto dump = dumps_.find(pid); dump != dumps_.end()) {
    p.dump_path = std::move(dump->second);
    dumps_.erase(dump);
  }
  stats_.processes++;
  if (o.exited) {
    Exited(p, o.exit_time);  // reads a last time
  } else if (o.then_read) {
    p.last_read = o.asked_at;
    StartRead(p, false);
  }
  // Told even when a read started: its own end tells again.
  if (o.then_read && !p.reading && on_read_) on_read_(pid);
}

void JitMaps::Watch(uint32_t pid) {
  auto it = by_pid_.find(pid);
  if (it != by_pid_.end() && !it->second->exited) {
    // (procfs: a read that does not block, at most once a second a pid.)
    Process& p = *it->second;
    const auto now = std::chrono::steady_clock::now();
    if (now - p.start_checked < std::chrono::seconds(1)) return;
    p.start_checked = now;
    if (StartTicks(proc_ + "/" + std::to_string(pid) + "/stat") == p.start_ticks) return;
    Retire(p);
  }
  StartOpen(pid, false, 0);
}

void JitMaps::Retire(Process& p) {
  stats_.reused++;
  p.exited = true;
  p.exit_time = std::max(p.last_resolved, p.last_read);
  p.final_read_wanted = false;
  Close(p);
  auto it = by_pid_.find(p.pid);
  if (it != by_pid_.end() && it->second == &p) by_pid_.erase(it);
}

void JitMaps::SetJitdump(uint32_t pid, const std::string& path) {
  auto it = by_pid_.find(pid);
  if (it != by_pid_.end() && !it->second->exited) {
    it->second->dump_path = path;
    return;
  }
  dumps_[pid] = path;  // taken when its root is open
  Watch(pid);
}

void JitMaps::StartRead(Process& p, bool last) {
  if (p.root_fd < 0) return;
  if (p.reading) {
    p.final_read_wanted |= last;
    return;
  }
  p.read = true;
  p.reading = true;
  UniqueFd root;
  if (last) {
    root.reset(p.root_fd);  // the read closes it
    p.root_fd = -1;
    open_roots_--;
  } else {
    root.reset(fcntl(p.root_fd, F_DUPFD_CLOEXEC, 0));
  }
  auto shared_root = std::make_shared<UniqueFd>(std::move(root));
  Process* process = &p;  // a list node, kept while it reads (Reap)
  RunLookup<NamesRead>(
      lookups_,
      [shared_root, pid = p.pid, uid = p.uid, limits = limits_, dump = p.dump_path,
       cursor = p.dump_cursor, last, proc = proc_, ticks = p.start_ticks]() -> Expected<NamesRead> {
        NamesRead read;
        read.cursor = cursor;
        if (shared_root->get() < 0) {
          read.map = ErrnoError("dup of a process's root", EMFILE);
          return read;
        }
        // While it lives, the pid must still be this process (an exit
        // record may have been lost): else the map is another's.
        if (!last && StartTicks(proc + "/" + std::to_string(pid) + "/stat") != ticks) {
          read.reused = true;
          return read;
        }
        read.map = ReadPerfMap(shared_root->get(), pid, uid, limits);
        if (!dump.empty())
          read.dump = ReadJitdump(shared_root->get(), dump, uid, &read.cursor, limits);
        return read;
      },
      [this, process](Expected<NamesRead> read) { FinishRead(*process, std::move(read)); });
}

bool JitMaps::Count(Process& p, const Expected<PerfMapParse>& parsed, const char* what) {
  if (!parsed) {
    if (parsed.error().code() == Errc::kNotFound) {
      stats_.missing++;
    } else {
      stats_.errors++;
      if (!p.warned)  // once per process: a bad map would be read again every second
        spdlog::warn("JIT {} of pid {}: {}", what, p.pid, Printable(parsed.error().message()));
      p.warned = true;
    }
    return false;
  }
  stats_.bad_lines += parsed->bad_lines;
  stats_.truncated += parsed->truncated;
  return true;
}

uint64_t JitMaps::Share() const {
  // An equal share of the budget for each process watched now (and those
  // being opened): one user's many runtimes cannot take another's.
  return name_budget_ / std::max<uint64_t>(1, open_roots_ + opening_.size());
}

bool JitMaps::Spend(Process& p, uint64_t cost, uint64_t share) {
  if (stats_.name_bytes + cost > name_budget_ || p.name_bytes + cost > share) {
    stats_.over_budget++;
    return false;
  }
  p.name_bytes += cost;
  stats_.name_bytes += cost;
  return true;
}

const PerfMapSymbol* JitMaps::Keep(Process& p, PerfMapSymbol s, uint64_t share, bool* full) {
  // The files only grow: what an earlier read took is the name kept then.
  if (auto seen = p.seen.find({s.start, s.size, std::string_view(s.name)}); seen != p.seen.end())
    return seen->second;
  if (p.symbols.size() >= limits_.max_lines) {
    stats_.truncated++;
    *full = true;
    return nullptr;
  }
  if (!Spend(p, NameCost(s), share)) return nullptr;
  const PerfMapSymbol& kept = p.symbols.emplace_back(std::move(s));
  p.seen.emplace(std::make_tuple(kept.start, kept.size, std::string_view(kept.name)), &kept);
  p.by_start[kept.start] = &kept;  // a later line for the same code wins
  stats_.symbols++;
  return &kept;
}

void JitMaps::Take(Process& p, Expected<PerfMapParse> parsed, const char* what) {
  if (!Count(p, parsed, what)) return;
  const uint64_t share = Share();
  bool full = false;
  for (PerfMapSymbol& s : parsed->symbols)
    if (Keep(p, std::move(s), share, &full); full) break;
}

void JitMaps::TakeDump(Process& p, Expected<JitdumpParse> parsed) {
  Expected<PerfMapParse> names = parsed ? Expected<PerfMapParse>(std::move(parsed->names))
                                        : Expected<PerfMapParse>(parsed.error());
  if (!Count(p, names, "dump")) return;
  const uint64_t share = Share();
  bool full = false;
  size_t move = 0;
  // Loads and moves in the file's order: a later record for the same code wins.
  for (size_t i = 0; i <= names->symbols.size() && !full; i++) {
    for (; move < parsed->moves.size() && parsed->moves[move].before == i && !full; move++) {
      const JitdumpMove& m = parsed->moves[move];
      auto it = p.by_index.find(m.index);
      if (it == p.by_index.end()) {
        stats_.bad_lines++;  // never loaded, or its name or index was not kept
        continue;
      }
      if (const PerfMapSymbol* kept = Keep(p, {m.start, m.size, it->second->name}, share, &full))
        it->second = kept;
    }
    if (i == names->symbols.size() || full) break;
    const PerfMapSymbol* kept = Keep(p, std::move(names->symbols[i]), share, &full);
    if (!kept) continue;
    // Kept for moves as a reference to the name, itself within the share.
    const uint64_t index = parsed->indexes[i];
    if (auto it = p.by_index.find(index); it != p.by_index.end())
      it->second = kept;
    else if (p.by_index.size() < limits_.max_lines && Spend(p, kIndexCost, share))
      p.by_index.emplace(index, kept);
  }
}

void JitMaps::FinishRead(Process& p, Expected<NamesRead> read) {
  p.reading = false;
  // The cursor comes back, moved on by what was read (a read that never
  // ran leaves it where it was: the next one reads from there).
  if (read) p.dump_cursor = read->cursor;
  if (read && read->reused && !p.exited) {
    Retire(p);
    if (on_read_) on_read_(p.pid);
    return;
  }
  if (!read) {
    Take(p, read.error(), "names");
  } else {
    if (read->map) stats_.reads++;
    Take(p, std::move(read->map), "map");
    if (read->dump) {
      Expected<JitdumpParse>& dump = *read->dump;
      if (dump && dump->bad_header) dump = Error(Errc::kBadElf, p.dump_path + ": not a jitdump");
      if (dump) stats_.dump_reads++;
      TakeDump(p, std::move(dump));
    }
  }
  if (p.final_read_wanted) {
    p.final_read_wanted = false;
    StartRead(p, true);
  }
  if (!p.reading && on_read_) on_read_(p.pid);
}

const PerfMapSymbol* JitMaps::Find(const Process& p, uint64_t pc) {
  auto it = p.by_start.upper_bound(pc);
  if (it == p.by_start.begin()) return nullptr;
  const PerfMapSymbol* s = std::prev(it)->second;
  return pc - s->start < s->size ? s : nullptr;
}

bool JitMaps::Reading(uint32_t pid) const {
  if (opening_.count(pid)) return true;
  auto it = by_pid_.find(pid);
  return it != by_pid_.end() && it->second->reading;
}

std::optional<JitLocation> JitMaps::Resolve(uint32_t pid, const std::string& comm, uint64_t pc,
                                            uint64_t now) {
  auto it = by_pid_.find(pid);
  Process* p = it != by_pid_.end() ? it->second : nullptr;
  if (!p) {
    if (!opening_.count(pid)) {
      auto failed = failed_.find(pid);
      // (A buffer of another CPU may be a little older: not a reason to retry.)
      if (failed != failed_.end() && (now < failed->second || now - failed->second < kRereadNs))
        return std::nullopt;
    }
    StartOpen(pid, true, now);  // reads once open; at once without lookups
    it = by_pid_.find(pid);
    if (it == by_pid_.end()) return std::nullopt;
    p = it->second;
  }
  const PerfMapSymbol* s = Find(*p, pc);
  if (!s && !p->exited && !p->reading &&
      (!p->read || (now >= p->last_read && now - p->last_read >= kRereadNs))) {
    p->last_read = now;
    StartRead(*p, false);
    s = Find(*p, pc);
  }
  if (!s) return std::nullopt;
  p->last_resolved = std::max(p->last_resolved, now);
  if (p->image == kNoImage) {
    std::string name = comm.empty() ? "?" : comm;
    p->image = images_.Intern(p->identity, "[jit " + name + " " + std::to_string(pid) + "]",
                              ImageKind::kJit);
    by_image_[p->image] = p;
  }
  return JitLocation{p->image, pc};
}

void JitMaps::Exited(Process& p, uint64_t time) {
  p.exited = true;
  p.exit_time = time;
  // What it wrote since the last read, through the root it had: the read
  // takes the root and closes it (after a read under way, the next one).
  StartRead(p, true);
}

void JitMaps::OnExit(uint32_t pid, uint64_t time) {
  if (auto o = opening_.find(pid); o != opening_.end()) {
    o->second.exited = true;  // FinishOpen reads a last time
    o->second.exit_time = time;
    return;
  }
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end() || it->second->exited) return;
  Exited(*it->second, time);
}

std::vector<const PerfMapSymbol*> JitMaps::Unstored(int32_t image,
                                                    const std::vector<uint64_t>& offsets) const {
  std::vector<const PerfMapSymbol*> out;
  auto it = by_image_.find(image);
  if (it == by_image_.end()) return out;
  const Process& p = *it->second;
  std::unordered_set<const PerfMapSymbol*> seen;
  for (uint64_t offset : offsets) {
    const PerfMapSymbol* s = Find(p, offset);
    if (s && !p.stored.count(s) && seen.insert(s).second) out.push_back(s);
  }
  return out;
}

void JitMaps::MarkStored(int32_t image, const std::vector<const PerfMapSymbol*>& names) {
  auto it = by_image_.find(image);
  if (it == by_image_.end()) return;
  it->second->stored.insert(names.begin(), names.end());
}

void JitMaps::Reap(uint64_t time) {
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = *it;
    // Called once the counts resolved before `time` have committed: the
    // names they needed are stored, and no later sample can name this
    // process.
    if (!p.exited || p.exit_time >= time || p.reading || p.final_read_wanted) {
      ++it;
      continue;
    }
    auto pid = by_pid_.find(p.pid);
    if (pid != by_pid_.end() && pid->second == &p) by_pid_.erase(pid);
    if (p.image != kNoImage) by_image_.erase(p.image);
    stats_.name_bytes -= p.name_bytes;
    it = processes_.erase(it);
  }
  failed_.clear();  // at most the pids that missed since the last merge
  // Jitdumps of pids whose root never opened (gone first): their process
  // cannot be read any more.
  std::erase_if(dumps_, [&](const auto& d) { return !opening_.count(d.first); });
}

}  // namespace lcpi
