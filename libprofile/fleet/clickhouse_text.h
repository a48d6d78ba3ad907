// clickhouse_text.h - text sent to ClickHouse: values of a TabSeparated
// insert and string literals of a query. Every name lcpi ships (commands,
// paths, cgroups, identities of unknown images) is untrusted and may hold
// any byte; each is escaped here, the one place, so that a tab, newline,
// backslash, quote or a byte that is not UTF-8 arrives as the same bytes.
// Both forms are what ClickHouse 18.16 and current releases read alike.
#ifndef LCPI_LIBPROFILE_FLEET_CLICKHOUSE_TEXT_H
#define LCPI_LIBPROFILE_FLEET_CLICKHOUSE_TEXT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lcpi::fleet {

// Appends `value` as one field of a TabSeparated row: backslash, tab,
// newline, carriage return, NUL, backspace and form feed as their
// backslash escapes; every other byte as it is (a String column holds
// bytes, not text).
void AppendTsvField(std::string& out, std::string_view value);
// A number as a field.
void AppendTsvField(std::string& out, uint64_t value);

// `value` as a quoted string literal of a query: '...' with backslash and
// quote escaped, and every byte outside printable ASCII as \xHH, so the
// query text itself stays ASCII.
std::string SqlString(std::string_view value);

// `value` percent-encoded for a URL's query parameter (RFC 3986 unreserved
// characters kept).
std::string UrlEncode(std::string_view value);

// `values` as the insides of IN (...) lists, each as SqlString, ", "
// between, each list at most `max_bytes` long (a value longer alone is a
// list of its own): a query naming many values is sent as several, each
// well under the server's max_query_size (256 KiB by default).
std::vector<std::string> SqlInLists(const std::vector<std::string>& values, size_t max_bytes);

// `rows` (TabSeparated, each ended by '\n') in parts of whole rows, each
// at most `max_bytes` long (a row longer alone is a part of its own): one
// window's rows are sent as several inserts, so that a request's size is
// bounded whatever the window (a proxy in front of the server may limit
// bodies; a part that fails is the only one lost on the wire).
std::vector<std::string_view> TsvChunks(std::string_view rows, size_t max_bytes);

// `url` without its user and password ("http://u:pw@h/" is "http://h/"),
// whether or not it parses: what every message prints of a URL.
std::string WithoutUserinfo(std::string_view url);

}  // namespace lcpi::fleet

#endif  // LCPI_LIBPROFILE_FLEET_CLICKHOUSE_TEXT_H
