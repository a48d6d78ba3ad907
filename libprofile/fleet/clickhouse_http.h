// clickhouse_http.h - a ClickHouse server reached over its HTTP interface
// (libcurl): queries answered as TabSeparated text, and inserts of
// TabSeparated rows. The shipper (ship/) uses it, and the fleet reports
// will. One request at a time; no retries here: the caller decides (the
// shipper backs off and keeps its windows).
#ifndef LCPI_LIBPROFILE_FLEET_CLICKHOUSE_HTTP_H
#define LCPI_LIBPROFILE_FLEET_CLICKHOUSE_HTTP_H

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "libprofile/base/error.h"

namespace lcpi::fleet {

struct ClickHouseOptions {
  // How long a connection may take. A request has no total time limit (a
  // large insert over a slow link takes what it takes; a total one made
  // such a window fail on every try): it is given up when fewer than
  // `low_speed_bytes` per second move for `low_speed_time`.
  std::chrono::milliseconds connect_timeout{5000};
  long low_speed_bytes = 1024;
  std::chrono::seconds low_speed_time{60};
};

class ClickHouseHttp {
 public:
  // Checks the URL: http:// or https://, a host, no query or fragment
  // (credentials as user:password@ are passed on as HTTP basic auth).
  // kInvalidArgument, saying what is wrong. Nothing is sent yet.
  static Expected<std::unique_ptr<ClickHouseHttp>> Create(const std::string& url,
                                                          ClickHouseOptions options = {});
  ~ClickHouseHttp();
  ClickHouseHttp(const ClickHouseHttp&) = delete;
  ClickHouseHttp& operator=(const ClickHouseHttp&) = delete;

  // Runs one statement; returns the server's answer (for a SELECT, its rows
  // in the format the statement names; TabSeparated by default). kIo: the
  // server cannot be reached or did not answer in time (retry later);
  // kInvalidArgument: it answered with an error (its message, first line).
  Expected<std::string> Query(const std::string& sql);

  // INSERT INTO `table_columns` FORMAT TabSeparated, with `rows` (each ended
  // by '\n') as the body, in requests of at most kMaxInsertBytes of whole
  // rows (TsvChunks). Errors as Query's; on one, the parts before it are in
  // (lcpi-ship's rows count only once their window's row names their try).
  Expected<void> InsertTsv(const std::string& table_columns, std::string_view rows);
  static constexpr size_t kMaxInsertBytes = 4 << 20;

  // The URL without credentials, for messages.
  const std::string& shown_url() const { return shown_url_; }

 private:
  ClickHouseHttp(std::string url, std::string shown, ClickHouseOptions options);
  Expected<std::string> Post(const std::string& query_param, std::string_view body);

  std::string url_;
  std::string shown_url_;
  ClickHouseOptions options_;
  void* curl_ = nullptr;  // CURL*, reused so connections are kept alive
};

}  // namespace lcpi::fleet

#endif  // LCPI_LIBPROFILE_FLEET_CLICKHOUSE_HTTP_H
