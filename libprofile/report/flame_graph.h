// flame_graph.h - call stacks as a tree of frames, drawn as inline SVG for
// the HTML page: a flame graph of every stack (the outermost frames at the
// bottom, each frame as wide as its stack samples) and an icicle of one
// procedure's callers (the procedure at the top, its callers below). No
// script: each frame is a <g class="frame"> holding a <title> (the whole
// name, its image, its samples and share, shown on hover and read by screen
// readers), a <rect> and a text label cut in the middle to fit, so the
// graph reads without colour.
#ifndef LCPI_LIBPROFILE_REPORT_FLAME_GRAPH_H
#define LCPI_LIBPROFILE_REPORT_FLAME_GRAPH_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/report/stack_names.h"

namespace lcpi::report {

struct FlameNode {
  std::string name, image;          // image "" for a root and the [stack end: ...] frames
  uint64_t count = 0;               // stack samples through this path
  std::vector<FlameNode> children;  // by count, descending, then by name
};

// Every stack from its outermost frame in, under a root of all the stack
// samples; a stack cut short (depth cap, kernel only) hangs under a
// "[stack end: ...]" frame of its own.
FlameNode BuildFlame(const std::vector<NamedStack>& stacks);

// The callers of `symbol`: the root is the procedure (each stack counted at
// its innermost occurrence), its children its callers, and so on out; a
// stack that ends there ends in its "[stack end: ...]" frame, except a
// complete one (walk ended). count 0 when no stack passes through it.
FlameNode BuildIcicle(const std::vector<NamedStack>& stacks, const std::string& symbol);

// The procedure the page draws callers of: `preferred` (the flat profile's
// hottest) when a stack passes through it, else the innermost frame of most
// stack samples; "" without stacks.
std::string IcicleSymbol(const std::vector<NamedStack>& stacks, const std::string& preferred);

// At most this many frames drawn; frames narrower than a pixel (of the
// 1200-unit view box) are left out with their callees, and counted.
inline constexpr size_t kMaxFlameFrames = 5000;

// The tree as an <svg id="id"> (width 100 %, a view box 1200 units wide, a
// row of 18 per level). `root_drawn`: the root is a frame of its own (the
// icicle's procedure), not the bare sum under a flame graph. `upward`: the
// root at the bottom (a flame graph), else at the top (an icicle). `title`
// is the figure's accessible name. *left_out counts frames not drawn.
std::string FlameSvg(const FlameNode& root, const std::string& id, const std::string& title,
                     bool root_drawn, bool upward, size_t* left_out);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_FLAME_GRAPH_H
