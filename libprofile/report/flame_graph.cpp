// flame_graph.cpp - the tree of call stacks and its SVG (see flame_graph.h).
#include "libprofile/report/flame_graph.h"

#include <algorithm>
#include <functional>
#include <map>

#include "libprofile/base/saturating.h"
#include "libprofile/base/stack_end.h"
#include "libprofile/base/text.h"
#include "libprofile/report/cell_format.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/render_html.h"

namespace lcpi::report {
namespace {

constexpr double kViewWidth = 1200;
constexpr int kRow = 20;  // a level: a 19-unit frame and a 1-unit gap
// A label's character, about, at the style sheet's 13 px.
constexpr double kCharWidth = 8;
// Light, warm fills (black text on each above 7:1) told apart by name;
// the labels and titles carry the meaning, not the colour.
const char* const kFills[] = {"#fbd3a3", "#f9c08a", "#fde0b8", "#f7b27a", "#fcd0c0", "#f5c9a0"};

// A tree under construction: children found by (name, image).
struct Building {
  uint64_t count = 0;
  std::map<NamedFrame, Building> children;
};

void Add(Building* node, const std::vector<NamedFrame>& path, uint64_t count) {
  node->count = SaturatingAdd(node->count, count);
  for (const NamedFrame& f : path) {
    node = &node->children[f];
    node->count = SaturatingAdd(node->count, count);
  }
}

FlameNode Finish(const NamedFrame& frame, const Building& b) {
  FlameNode n{frame.first, frame.second, b.count, {}};
  n.children.reserve(b.children.size());
  for (const auto& [f, child] : b.children) n.children.push_back(Finish(f, child));
  std::stable_sort(n.children.begin(), n.children.end(),
                   [](const FlameNode& a, const FlameNode& c) { return a.count > c.count; });
  return n;
}

size_t Depth(const FlameNode& n) {
  size_t d = 0;
  for (const FlameNode& c : n.children) d = std::max(d, Depth(c));
  return d + 1;
}

// FNV-1a, not std::hash: the same fill for a name on every build (the
// pages' goldens hold it).
const char* Fill(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return kFills[h % std::size(kFills)];
}

}  // namespace

FlameNode BuildFlame(const std::vector<NamedStack>& stacks) {
  Building root;
  for (const NamedStack& s : stacks) {
    std::vector<NamedFrame> path;
    path.reserve(s.frames.size() + 1);
    if (s.end != static_cast<uint8_t>(StackEnd::kWalkEnded))
      path.emplace_back(StackEndFrame(s.end), "");
    path.insert(path.end(), s.frames.rbegin(), s.frames.rend());
    Add(&root, path, s.count);
  }
  return Finish({"all stack samples", ""}, root);
}

FlameNode BuildIcicle(const std::vector<NamedStack>& stacks, const std::string& symbol) {
  Building root;
  NamedFrame top{symbol, ""};
  for (const NamedStack& s : stacks) {
    auto at = std::find_if(s.frames.begin(), s.frames.end(),
                           [&](const NamedFrame& f) { return f.first == symbol; });
    if (at == s.frames.end()) continue;
    if (top.second.empty()) top.second = at->second;
    std::vector<NamedFrame> path(at + 1, s.frames.end());
    if (s.end != static_cast<uint8_t>(StackEnd::kWalkEnded))
      path.emplace_back(StackEndFrame(s.end), "");
    Add(&root, path, s.count);
  }
  return Finish(top, root);
}

std::string IcicleSymbol(const std::vector<NamedStack>& stacks, const std::string& preferred) {
  std::map<std::string, uint64_t> innermost;
  for (const NamedStack& s : stacks) {
    for (const NamedFrame& f : s.frames) {
      if (f.first == preferred) return preferred;
    }
    if (!s.frames.empty())
      innermost[s.frames.front().first] = SaturatingAdd(innermost[s.frames.front().first], s.count);
  }
  std::string best;
  uint64_t most = 0;
  for (const auto& [name, n] : innermost) {
    if (n > most) best = name, most = n;
  }
  return best;
}

std::string FlameSvg(const FlameNode& root, const std::string& id, const std::string& title,
                     bool root_drawn, bool upward, size_t* left_out) {
  *left_out = 0;
  const size_t levels = Depth(root) - (root_drawn ? 0 : 1);
  const int height = static_cast<int>(std::max<size_t>(levels, 1)) * kRow;
  const double total = static_cast<double>(std::max<uint64_t>(root.count, 1));
  std::string out = "<svg class=\"flame\" id=\"" + id + "\" role=\"img\" aria-labelledby=\"" + id +
                    "-title\" width=\"100%\" viewBox=\"0 0 " + Fixed(kViewWidth, 0) + " " +
                    std::to_string(height) +
                    "\" preserveAspectRatio=\"xMinYMin meet\">\n<title id=\"" + id + "-title\">" +
                    HtmlEscape(title) + "</title>\n";
  size_t drawn = 0;
  // Depth-first, left to right; x in view-box units.
  std::function<void(const FlameNode&, size_t, double)> draw = [&](const FlameNode& n, size_t level,
                                                                   double x) {
    const double w = static_cast<double>(n.count) / total * kViewWidth;
    if (w < 1 || drawn >= kMaxFlameFrames) {
      ++*left_out;
      return;
    }
    ++drawn;
    const double y = upward ? static_cast<double>(height - kRow * static_cast<int>(level + 1))
                            : static_cast<double>(kRow * static_cast<int>(level));
    std::string what = HtmlEscape(n.name);
    if (!n.image.empty()) what += " in " + HtmlEscape(n.image);
    out += "<g class=\"frame\"><title>" + what + ": " + std::to_string(n.count) +
           " stack samples, " + Fixed(Percent(n.count, root.count), 2) + " %</title><rect x=\"" +
           Fixed(x, 2) + "\" y=\"" + Fixed(y, 0) + "\" width=\"" + Fixed(w, 2) + "\" height=\"" +
           std::to_string(kRow - 1) + "\" fill=\"" + Fill(n.name) + "\"/>";
    const auto chars = static_cast<size_t>((w - 6) / kCharWidth);
    if (chars >= 3) {
      out += "<text x=\"" + Fixed(x + 3, 2) + "\" y=\"" + Fixed(y + 14, 0) + "\">" +
             HtmlEscapePrintable(CutText(Printable(n.name), chars, true)) + "</text>";
    }
    out += "</g>\n";
    double cx = x;
    for (const FlameNode& c : n.children) {
      draw(c, level + 1, cx);
      cx += static_cast<double>(c.count) / total * kViewWidth;
    }
  };
  if (root_drawn) {
    draw(root, 0, 0);
  } else {
    double cx = 0;
    for (const FlameNode& c : root.children) {
      draw(c, 0, cx);
      cx += static_cast<double>(c.count) / total * kViewWidth;
    }
  }
  return out + "</svg>\n";
}

}  // namespace lcpi::report
