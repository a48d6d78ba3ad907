// clickhouse_http.cpp - ClickHouse over HTTP with libcurl (clickhouse_http.h).
#include "libprofile/fleet/clickhouse_http.h"

#include <curl/curl.h>

#include <mutex>

#include "libprofile/fleet/clickhouse_text.h"

namespace lcpi::fleet {

namespace {

// libcurl's global state, set up once for the process before any handle.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t Collect(char* data, size_t size, size_t n, void* user) {
  auto* out = static_cast<std::string*>(user);
  // An answer is bounded: a server that talks on is cut off (curl then
  // fails the request with CURLE_WRITE_ERROR).
  constexpr size_t kMaxAnswer = 256u << 20;
  if (out->size() + size * n > kMaxAnswer) return 0;
  out->append(data, size * n);
  return size * n;
}

// The URL's part, or "" when it has none.
std::string Part(CURLU* u, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(u, part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::string s = text;
  curl_free(text);
  return s;
}

}  // namespace

Expected<std::unique_ptr<ClickHouseHttp>> ClickHouseHttp::Create(const std::string& url,
                                                                 ClickHouseOptions options) {
  InitCurlOnce();
  // Messages carry the bytes as given but the user and password (the
  // journal is no place for them): whoever shows them makes them printable
  // (Printable, base/text.h), once.
  const std::string shown_input = WithoutUserinfo(url);
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return Error(Errc::kInvalidArgument,
                 "ClickHouse URL '" + shown_input +
                     "' must start with http:// or https:// (its HTTP interface, e.g. "
                     "http://clickhouse.example:8123)");
  }
  CURLU* u = curl_url();
  if (u == nullptr) return Error(Errc::kIo, "libcurl: out of memory");
  const CURLUcode rc = curl_url_set(u, CURLUPART_URL, url.c_str(), 0);
  std::string host = rc == CURLUE_OK ? Part(u, CURLUPART_HOST) : "";
  const std::string query = rc == CURLUE_OK ? Part(u, CURLUPART_QUERY) : "";
  const std::string fragment = rc == CURLUE_OK ? Part(u, CURLUPART_FRAGMENT) : "";
  std::string shown;
  if (rc == CURLUE_OK) {
    curl_url_set(u, CURLUPART_USER, nullptr, 0);
    curl_url_set(u, CURLUPART_PASSWORD, nullptr, 0);
    shown = Part(u, CURLUPART_URL);
  }
  curl_url_cleanup(u);
  if (rc != CURLUE_OK || host.empty()) {
    return Error(Errc::kInvalidArgument, "ClickHouse URL '" + shown_input + "' is not a URL (" +
                                             (rc != CURLUE_OK ? curl_url_strerror(rc) : "no host") +
                                             ")");
  }
  if (!query.empty() || !fragment.empty()) {
    return Error(Errc::kInvalidArgument,
                 "ClickHouse URL '" + shown_input +
                     "' must not have a query (?...) or fragment (#...): lcpi adds the query");
  }
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  while (!shown.empty() && shown.back() == '/') shown.pop_back();
  return std::unique_ptr<ClickHouseHttp>(new ClickHouseHttp(base + "/", shown, options));
}

ClickHouseHttp::ClickHouseHttp(std::string url, std::string shown, ClickHouseOptions options)
    : url_(std::move(url)), shown_url_(std::move(shown)), options_(options) {}

ClickHouseHttp::~ClickHouseHttp() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Expected<std::string> ClickHouseHttp::Post(const std::string& query_param, std::string_view body) {
  if (curl_ == nullptr) curl_ = curl_easy_init();
  CURL* c = static_cast<CURL*>(curl_);
  if (c == nullptr) return Error(Errc::kIo, "libcurl: cannot make a handle");
  curl_easy_reset(c);
  const std::string url = query_param.empty() ? url_ : url_ + "?query=" + UrlEncode(query_param);
  std::string answer;
  char curl_error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_error);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, options_.low_speed_bytes);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.low_speed_time.count()));
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  // no "Expect: 100-continue" round trip before a large insert
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  headers = curl_slist_append(headers, "Content-Type: text/plain; charset=binary");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    return Error(Errc::kIo, "cannot reach ClickHouse at " + shown_url_ + ": " +
                                (curl_error[0] != '\0' ? curl_error : curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    std::string first = answer.substr(0, answer.find('\n'));
    if (first.size() > 500) first.resize(500);
    // 5xx while the server starts or stops: retry; 4xx: the request is wrong
    const Errc code = status >= 500 && first.find("DB::Exception") == std::string::npos
                          ? Errc::kIo
                          : Errc::kInvalidArgument;
    return Error(code, "ClickHouse at " + shown_url_ + " answered HTTP " + std::to_string(status) +
                           ": " + first);
  }
  return answer;
}

Expected<std::string> ClickHouseHttp::Query(const std::string& sql) { return Post("", sql); }

Expected<void> ClickHouseHttp::InsertTsv(const std::string& table_columns, std::string_view rows) {
  const std::string insert = "INSERT INTO " + table_columns + " FORMAT TabSeparated";
  for (std::string_view part : TsvChunks(rows, kMaxInsertBytes)) {
    auto r = Post(insert, part);
    if (!r) return r.error();
  }
  return {};
}

}  // namespace lcpi::fleet
