// tsv_answer.cpp - TabSeparated answers read row by row (tsv_answer.h).
#include "libprofile/fleet/tsv_answer.h"

#include <algorithm>
#include <string>

namespace lcpi::fleet {

Expected<void> ForEachTsvRow(
    std::string_view text, size_t fields, size_t max_rows,
    const std::function<Expected<void>(const std::vector<std::string_view>&)>& row) {
  std::vector<std::string_view> f;  // one row's fields, reused
  size_t pos = 0;
  for (size_t n = 1; pos < text.size(); ++n) {
    if (n > max_rows) {
      return Error(Errc::kCorrupt, "ClickHouse answered more than " + std::to_string(max_rows) +
                                       " rows to one query (the limit): narrow the selection "
                                       "(--host, --since/--until, --build-id, -i)");
    }
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const size_t width =
        1 + static_cast<size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(pos),
                                           text.begin() + static_cast<std::ptrdiff_t>(end), '\t'));
    if (width != fields) {
      return Error(Errc::kCorrupt, "ClickHouse answered row " + std::to_string(n) + " of " +
                                       std::to_string(width) + " fields, not " +
                                       std::to_string(fields));
    }
    f.clear();  // the row has exactly `fields` fields: fields - 1 tabs before `end`
    size_t s = pos;
    for (size_t i = 1; i < fields; ++i) {
      const size_t tab = text.find('\t', s);
      f.push_back(text.substr(s, tab - s));
      s = tab + 1;
    }
    f.push_back(text.substr(s, end - s));
    if (auto ok = row(f); !ok) return ok.error();
    pos = end + 1;
  }
  return {};
}

}  // namespace lcpi::fleet
