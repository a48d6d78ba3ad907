// html_page.cpp - lcpiprof's HTML page (html_page.h): the reports built as
// the tools build them, their Documents rendered as HTML tables, and the
// per-epoch plot.
#include "libprofile/report/html_page.h"

#include <algorithm>
#include <map>

#include "libprofile/base/saturating.h"
#include "libprofile/report/cell_format.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/render_html.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Okabe and Ito's colours (told apart with the common colour-vision
// deficiencies), each line also with its own dash pattern and its name.
const char* const kColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#8a6d00"};
const char* const kDashes[] = {"", "8 4", "2 3", "10 3 2 3", "4 4"};

std::string Section(const std::string& id, const std::string& heading, const std::string& body) {
  return "<section aria-labelledby=\"" + id + "\">\n<h2 id=\"" + id + "\">" + heading + "</h2>\n" +
         body + "</section>\n";
}

std::string EpochLabel(const EpochInfo& e) {
  return e.tag ? std::to_string(e.id) + " (" + *e.tag + ")" : std::to_string(e.id);
}

const char* KindWord(const EpochInfo& e) {
  return e.kind == EpochKind::kWindow ? "window" : "epoch";
}

// The share of the top images per epoch and window: a line per image over
// them (SVG, described by the table after it, which holds the same numbers).
std::string PerEpoch(const HtmlReport& r) {
  const Header& h = r.images.header;
  if (r.per_epoch.empty()) {
    const std::string one = h.epochs.size() == 1 ? KindWord(h.epochs.front()) : "epoch";
    return "<p class=\"note\">One " + one +
           " selected. With several (<code>--epoch all</code>, a tag's span, or "
           "<code>--since</code>/<code>--until</code>), this section plots the top images' "
           "shares in each epoch and window.</p>\n";
  }
  const std::string event = h.events.empty() ? "-" : h.events[r.images.sort_column].name;
  const std::vector<EpochInfo>& plotted = r.plotted;
  const size_t n = plotted.size();
  double top = 0;
  for (const EpochSeries& s : r.per_epoch)
    for (double p : s.percent) top = std::max(top, p);
  // A multiple of 20, so that the quarter lines fall on whole multiples of 5.
  top = std::max(20.0, 20.0 * static_cast<double>(static_cast<int>((top + 19.999) / 20)));
  const int left = 48, right = 230, plot_w = 420, plot_h = 180, above = 12, below = 40;
  const int width = left + plot_w + right, height = above + plot_h + below;
  auto x = [&](size_t i) {
    return left + (n > 1 ? static_cast<double>(i) * plot_w / static_cast<double>(n - 1) : 0.0);
  };
  auto y = [&](double p) { return above + plot_h - p / top * plot_h; };
  std::string svg =
      "<figure>\n<svg role=\"img\" aria-labelledby=\"epoch-plot-title\" width=\"" +
      std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
      std::to_string(width) + " " + std::to_string(height) +
      "\">\n<title id=\"epoch-plot-title\">" + "Share of " + HtmlEscape(event) +
      " samples per epoch and window, top images (the table below has the numbers)</title>\n";
  for (int g = 0; g <= 4; ++g) {
    const double p = top * g / 4;
    const std::string yy = Fixed(y(p), 1);
    svg += "<line x1=\"" + std::to_string(left) + "\" x2=\"" + std::to_string(left + plot_w) +
           "\" y1=\"" + yy + "\" y2=\"" + yy + "\" stroke=\"#d0d7de\"/>\n<text x=\"" +
           std::to_string(left - 6) + "\" y=\"" + yy + "\" dy=\"4\" text-anchor=\"end\">" +
           Fixed(p, 0) + " %</text>\n";
  }
  // At most 12 labels on the axis, the newest always among them; the table
  // names every column.
  const size_t every = (n + 11) / 12;
  for (size_t i = 0; i < n; ++i) {
    if ((n - 1 - i) % every != 0) continue;
    svg += "<text x=\"" + Fixed(x(i), 1) + "\" y=\"" + std::to_string(above + plot_h + 18) +
           "\" text-anchor=\"middle\">" + HtmlEscape(EpochLabel(plotted[i])) + "</text>\n";
  }
  svg += "<text x=\"" + std::to_string(left + plot_w / 2) + "\" y=\"" + std::to_string(height - 4) +
         "\" text-anchor=\"middle\">epoch or window</text>\n";
  for (size_t s = 0; s < r.per_epoch.size(); ++s) {
    const EpochSeries& series = r.per_epoch[s];
    const std::string colour = kColours[s % 5], dash = kDashes[s % 5];
    std::string points;
    for (size_t i = 0; i < series.percent.size(); ++i)
      points += (i ? " " : "") + Fixed(x(i), 1) + "," + Fixed(y(series.percent[i]), 1);
    svg += "<polyline fill=\"none\" stroke-width=\"2.5\" stroke=\"" + colour + "\"" +
           (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + " points=\"" + points +
           "\"/>\n";
    for (size_t i = 0; i < series.percent.size(); ++i) {
      svg += "<circle r=\"3.5\" fill=\"" + colour + "\" cx=\"" + Fixed(x(i), 1) + "\" cy=\"" +
             Fixed(y(series.percent[i]), 1) + "\"/>\n";
    }
    const int ly = above + 10 + static_cast<int>(s) * 22;
    const int lx = left + plot_w + 20;
    svg += "<line x1=\"" + std::to_string(lx) + "\" x2=\"" + std::to_string(lx + 30) + "\" y1=\"" +
           std::to_string(ly) + "\" y2=\"" + std::to_string(ly) + "\" stroke-width=\"2.5\" " +
           "stroke=\"" + colour + "\"" +
           (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/>\n<text x=\"" +
           std::to_string(lx + 38) + "\" y=\"" + std::to_string(ly) + "\" dy=\"4\">" +
           HtmlEscape(BaseName(series.image)) + "</text>\n";
  }
  svg += "</svg>\n</figure>\n";
  std::string table = "<table>\n<caption>Share of " + HtmlEscape(event) +
                      " samples per epoch and window (%)</caption>\n<thead><tr><th "
                      "scope=\"col\">image</th>";
  for (const EpochInfo& e : plotted) {
    table += "<th scope=\"col\" class=\"n\">" + std::string(KindWord(e)) + " " +
             HtmlEscape(EpochLabel(e)) + "</th>";
  }
  table += "</tr></thead>\n<tbody>\n";
  for (const EpochSeries& s : r.per_epoch) {
    table += "<tr><th scope=\"row\" class=\"path\">" + HtmlEscape(s.image) + "</th>";
    for (double p : s.percent) table += "<td class=\"n\">" + Fixed(p, 2) + "</td>";
    table += "</tr>\n";
  }
  std::string newest;
  if (plotted.size() < h.epochs.size()) {
    newest = "<p class=\"note\">The newest " + std::to_string(plotted.size()) + " of the " +
             std::to_string(h.epochs.size()) + " epochs and windows selected.</p>\n";
  }
  // A column per epoch: the table scrolls on its own rather than widen the page.
  return newest + svg + "<div class=\"scroll\">" + table + "</tbody>\n</table>\n</div>\n";
}

// The flame graph and the icicle, each with a sentence that says how to
// read it (the figures have no script: a frame's title is its tooltip).
std::string StacksSection(const HtmlReport& r) {
  if (r.stack_samples == 0) {
    return "<p class=\"note\">No call stacks are stored for this selection: lcpid takes them "
           "with <code>--stack-frequency</code>.</p>\n";
  }
  size_t left_out = 0;
  std::string out = "<p class=\"note\">" + std::to_string(r.stack_samples) +
                    " stack samples. Each frame is as wide as the stack samples that pass "
                    "through it; hover over one for its whole name, image and share.</p>\n";
  out +=
      "<figure>\n<figcaption>Flame graph: every stack, the outermost frames at the bottom, "
      "each procedure's callees above it</figcaption>\n" +
      FlameSvg(r.flame, "flame-graph",
               "Flame graph of " + std::to_string(r.stack_samples) + " stack samples", false, true,
               &left_out) +
      "</figure>\n";
  size_t icicle_left_out = 0;
  if (r.icicle.count > 0) {
    out +=
        "<h3 id=\"icicle-heading\">Callers of <code>" + HtmlEscape(r.icicle.name) +
        "</code></h3>\n<figure>\n<figcaption>Icicle: the " + std::to_string(r.icicle.count) +
        " stack samples through <code>" + HtmlEscape(r.icicle.name) +
        "</code>, the hottest procedure with stacks, at the top; " +
        "its callers below it, theirs below them</figcaption>\n" +
        FlameSvg(r.icicle, "icicle", "Callers of " + r.icicle.name, true, false, &icicle_left_out) +
        "</figure>\n";
  }
  if (left_out + icicle_left_out > 0) {
    out += "<p class=\"note\">" + std::to_string(left_out + icicle_left_out) +
           " frames narrower than a 1200th of the width (or past " +
           std::to_string(kMaxFlameFrames) + " frames) are not drawn.</p>\n";
  }
  return out;
}

std::string ListingSection(const Listing& l, size_t i) {
  const Document doc = ListingDocument(l);
  const std::string id = "listing-" + std::to_string(i + 1);
  std::string out = "<section aria-labelledby=\"" + id + "\">\n<h3 id=\"" + id + "\"><code>" +
                    HtmlEscape(l.procedure) + "</code> in <code>" + HtmlEscape(l.image) +
                    "</code></h3>\n<p class=\"note\">Addresses " + Hex(l.lo) + "-" + Hex(l.hi) +
                    "; samples:";
  for (size_t e = 0; e < l.header.events.size() && e < l.totals.size(); ++e)
    out += std::string(e ? "," : "") + " " + HtmlEscape(l.header.events[e].name) + " " +
           std::to_string(l.totals[e]);
  out += ". Each share is of the procedure's samples; the shading repeats it.</p>\n";
  out += HtmlTable(doc, 0, "Instructions of " + l.procedure + ", with source lines",
                   HtmlShares::kHeat);
  return out + "</section>\n";
}

}  // namespace

Expected<HtmlReport> BuildHtmlReport(ProfileDb& db, const HtmlOptions& options) {
  HtmlReport r;
  ProfOptions images = options.prof;
  images.view = View::kImages;
  images.images.clear();
  auto built = BuildProfile(db, images);
  if (!built) return built.error();
  r.images = std::move(*built);
  ProfOptions procedures = options.prof;
  procedures.view = View::kProcedures;
  if (procedures.top == 0) procedures.top = options.top_procedures;
  built = BuildProfile(db, procedures);
  if (!built) return built.error();
  r.procedures = std::move(*built);
  ProfOptions processes = images;
  processes.view = View::kProcesses;
  built = BuildProfile(db, processes);
  if (!built) return built.error();
  r.processes = std::move(*built);
  AddWarnings(r.images.warnings, &r.warnings);
  AddWarnings(r.procedures.warnings, &r.warnings);
  AddWarnings(r.processes.warnings, &r.warnings);

  for (const Row& row : r.procedures.rows) {
    if (r.listings.size() >= options.listings) break;
    if (!row.symbol) continue;
    ListOptions list;
    list.epoch = options.prof.epoch;
    list.range = options.prof.range;
    list.events = options.prof.events;
    list.procedure = row.name;
    list.image = row.identity;
    list.source = true;
    list.source_any = options.source_any;
    auto listing = BuildListing(db, list);
    if (!listing) {
      AddWarnings({"no listing of " + row.name + ": " + listing.error().message()}, &r.warnings);
      continue;
    }
    AddWarnings(listing->warnings, &r.warnings);
    r.listings.push_back(std::move(*listing));
  }

  // The call stacks, where lcpid took them (--stack-frequency).
  auto stacks = NamedStacks(db, r.images.header, &r.warnings);
  if (!stacks) return stacks.error();
  for (const NamedStack& s : *stacks) r.stack_samples = SaturatingAdd(r.stack_samples, s.count);
  if (r.stack_samples > 0) {
    r.flame = BuildFlame(*stacks);
    const std::string hottest = r.procedures.rows.empty() ? "" : r.procedures.rows.front().name;
    r.icicle = BuildIcicle(*stacks, IcicleSymbol(*stacks, hottest));
  }

  const Header& h = r.images.header;
  // Every selection of several epochs and windows (--epoch all, a tag's
  // span, a time range), its newest epochs_plotted: a report per column.
  if (h.epochs.size() > 1 && !h.events.empty()) {
    const size_t first = h.epochs.size() - std::min(h.epochs.size(), options.epochs_plotted);
    r.plotted.assign(h.epochs.begin() + static_cast<std::ptrdiff_t>(first), h.epochs.end());
    const std::string event = h.events[r.images.sort_column].name;
    for (const Row& row : r.images.rows) {
      if (r.per_epoch.size() >= options.images_per_epoch) break;
      r.per_epoch.push_back({row.name, std::vector<double>(r.plotted.size(), 0.0)});
    }
    for (size_t i = 0; i < r.plotted.size(); ++i) {
      ProfOptions one;
      one.view = View::kImages;
      one.epoch = std::to_string(r.plotted[i].id);
      one.range = {};
      one.events = {event};
      auto epoch = BuildProfile(db, one);
      if (!epoch) {
        // An epoch without samples of the event has no column: a share of 0.
        if (epoch.error().code() == Errc::kNotFound) continue;
        return epoch.error();
      }
      for (EpochSeries& s : r.per_epoch) {
        for (const Row& row : epoch->rows) {
          if (row.name == s.image && !row.counts.empty() && !epoch->header.totals.empty())
            s.percent[i] = Percent(row.counts[0], epoch->header.totals[0]);
        }
      }
    }
  }
  return r;
}

std::string RenderHtmlReport(const HtmlReport& r, const RenderOptions& /*options*/) {
  const Document images = ProfileDocument(r.images);
  const Document procedures = ProfileDocument(r.procedures);
  const Document processes = ProfileDocument(r.processes);
  const Header& h = r.images.header;
  std::string epochs;
  if (h.all_epochs)
    epochs = "all epochs";
  else if (!h.epochs.empty())
    epochs = "epoch " + EpochLabel(h.epochs.front());
  const std::string sort = h.events.empty() ? "-" : h.events[r.images.sort_column].name;
  const std::string title = "lcpi profile: " + epochs + ", by " + sort;

  std::string body = "<header>\n<h1>" + HtmlEscape(title) + "</h1>\n";
  body +=
      "<nav aria-label=\"Sections\"><ul>"
      "<li><a href=\"#summary\">Summary</a></li><li><a href=\"#per-epoch\">Per epoch</a></li>"
      "<li><a href=\"#images\">Images</a></li>"
      "<li><a href=\"#procedures\">Procedures</a></li>"
      "<li><a href=\"#processes\">Processes</a></li>"
      "<li><a href=\"#stacks\">Call stacks</a></li>"
      "<li><a href=\"#listings\">Listings</a></li>" +
      std::string(r.warnings.empty() ? "" : "<li><a href=\"#warnings\">Warnings</a></li>") +
      "</ul></nav>\n</header>\n<main>\n";
  body += Section("summary", "Where the numbers come from", HtmlSources(images, 3));
  body += Section("per-epoch", "Images per epoch", PerEpoch(r));
  body += Section("images", "Images",
                  HtmlTable(images, 0, "Samples per image, by " + sort, HtmlShares::kBars));
  body += Section("procedures", "Hottest procedures",
                  HtmlTable(procedures, 0, "Samples per procedure, by " + sort, HtmlShares::kBars));
  body += Section("processes", "Processes",
                  HtmlTable(processes, 0, "Samples per process, by " + sort, HtmlShares::kBars));
  body += Section("stacks", "Call stacks", StacksSection(r));
  std::string listings;
  if (r.listings.empty()) listings = "<p class=\"note\">No procedure with a symbol to list.</p>\n";
  for (size_t i = 0; i < r.listings.size(); ++i) listings += ListingSection(r.listings[i], i);
  body += Section("listings", "Instructions of the hottest procedures", listings);
  if (!r.warnings.empty()) {
    body +=
        "<section aria-labelledby=\"warnings\">\n" + HtmlWarnings(r.warnings, 2) + "</section>\n";
  }
  body += "</main>\n<footer><p class=\"note\">Written by lcpiprof --format html from " +
          HtmlEscape(h.database) + ". Shares are percent of each event's samples in the " +
          "epoch selection; listings' shares are of the procedure's samples.</p></footer>\n";
  return HtmlPage(title, body);
}

}  // namespace lcpi::report
