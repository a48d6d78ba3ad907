// held_batch.cpp - dropping a held batch's counts, keeping its accounting.
#include "libprofile/aggregate/held_batch.h"

#include <algorithm>
#include <string>

#include "libprofile/base/saturating.h"

namespace lcpi {

namespace {

void Add(MergeBatch& b, const std::string& name, int64_t delta) {
  if (delta == 0) return;
  auto it =
      std::find_if(b.stats.begin(), b.stats.end(), [&](const auto& s) { return s.first == name; });
  if (it == b.stats.end()) {
    b.stats.emplace_back(name, delta);
  } else {
    it->second = SaturatingAdd(it->second, delta);
  }
}

}  // namespace

uint64_t DropCounts(MergeBatch& batch, const DroppedAs& as) {
  uint64_t samples = 0;
  for (const CountRow& c : batch.counts) samples = SaturatingAdd(samples, c.count);
  batch.counts.clear();
  batch.counts.shrink_to_fit();
  batch.processes.clear();
  batch.processes.shrink_to_fit();
  batch.symbols.clear();
  batch.symbols.shrink_to_fit();
  batch.images.clear();
  // The stacks name the images by their place in the batch: they go too.
  uint64_t stack_samples = 0;
  for (const StackRow& st : batch.stacks) stack_samples = SaturatingAdd(stack_samples, st.count);
  stack_samples = std::min<uint64_t>(stack_samples, INT64_MAX);  // a statistic is an int64
  batch.stacks.clear();
  batch.stacks.shrink_to_fit();
  Add(batch, as.stacks, static_cast<int64_t>(stack_samples));
  // The Aggregator counts each sample it files as attributed or unknown:
  // those statistics are exactly the batch's counted samples.
  int64_t moved = 0;
  std::erase_if(batch.stats, [&](const auto& s) {
    if (s.first != "attributed" && s.first != "unknown") return false;
    moved = SaturatingAdd(moved, s.second);
    return true;
  });
  Add(batch, as.samples, moved);
  return samples;
}

bool HoldsRows(const MergeBatch& batch) {
  return !batch.counts.empty() || !batch.processes.empty() || !batch.symbols.empty() ||
         !batch.images.empty() || !batch.stacks.empty();
}

void FoldInto(MergeBatch& held, const MergeBatch& newer) {
  for (const auto& [name, delta] : newer.stats) Add(held, name, delta);
  for (size_t e = 0; e < held.events.size() && e < newer.events.size(); ++e) {
    held.events[e].time_enabled += newer.events[e].time_enabled;
    held.events[e].time_running += newer.events[e].time_running;
  }
  // The cost figures are sums too (window_costs): the newer samples' cost
  // stays measured though their counts were dropped.
  if (newer.cost) {
    if (!held.cost) held.cost = WindowCost{};
    WindowCost& c = *held.cost;
    c.samples += newer.cost->samples;
    c.cpu_ns += newer.cost->cpu_ns;
    c.interrupt_ns += newer.cost->interrupt_ns;
    c.interrupt_ci95_ns += newer.cost->interrupt_ci95_ns;
    c.daemon_ns += newer.cost->daemon_ns;
    c.module_samples += newer.cost->module_samples;
    c.module_handler_ns += newer.cost->module_handler_ns;
    c.stack_samples += newer.cost->stack_samples;
  }
  if (!held.observer_pid) held.observer_pid = newer.observer_pid;
  if (held.observer_image.empty()) held.observer_image = newer.observer_image;
}

}  // namespace lcpi
