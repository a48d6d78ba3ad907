// lcpi-ship - sends the closed windows of lcpid's profile database to
// ClickHouse, exactly once, and waits with them while the server is away
// (docs/fleet.md). lcpid has no network; this runs beside it as a reader of
// the database (group lcpi), under its own unit (ship/lcpi-ship.service).
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "libprofile/base/command_line.h"
#include "libprofile/base/control_protocol.h"
#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/fleet/clickhouse_http.h"
#include "libprofile/fleet/fleet_schema.h"
#include "libprofile/fleet/url_file.h"
#include "ship/fleet_host.h"
#include "ship/shipper.h"

namespace {

// A duration option: "30s", "1m", a bare number of seconds.
CLI::Option* AddDuration(CLI::App& app, const std::string& name, int64_t* seconds,
                         const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [seconds, name](const std::string& text) {
            auto d = lcpi::ParseDuration(text);
            if (!d) throw CLI::ValidationError(name, d.error().message());
            *seconds = *d;
          },
          help + " (default " + lcpi::FormatDuration(*seconds) + ")")
      ->type_name("DURATION");
}

// --create-distributed: the Distributed tables over the shards, then exit.
int CreateDistributed(const std::string& url, const std::string& database,
                      const std::string& cluster, const std::string& shard_database) {
  for (const std::string* name : {&database, &cluster, &shard_database}) {
    if (auto ok = lcpi::fleet::CheckDatabaseName(*name); !ok) {
      std::fprintf(stderr, "lcpi-ship: %s: %s\n", lcpi::Printable(*name).c_str(),
                   ok.error().message().c_str());
      return 2;
    }
  }
  auto ch = lcpi::fleet::ClickHouseHttp::Create(url);
  if (!ch) {
    std::fprintf(stderr, "lcpi-ship: %s\n", lcpi::Printable(ch.error().message()).c_str());
    return 2;
  }
  for (const std::string& sql :
       lcpi::fleet::FleetDistributedStatements(database, cluster, shard_database)) {
    if (auto done = (*ch)->Query(sql); !done) {
      std::fprintf(stderr, "lcpi-ship: %s\n", lcpi::Printable(done.error().message()).c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "lcpi-ship: %s: Distributed tables over %s.* of cluster %s\n",
               database.c_str(), shard_database.c_str(), cluster.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  lcpi::ship::ShipOptions o;
  const char* env_db = std::getenv("LCPI_DB");
  o.db_path = env_db && *env_db ? env_db : lcpi::kDefaultDatabase;
  o.state_path = "/var/lib/lcpi-ship/state.db";
  o.database = lcpi::fleet::kDefaultFleetDatabase;
  char host[HOST_NAME_MAX + 1] = "";
  gethostname(host, sizeof(host));
  o.host = lcpi::ship::DefaultFleetHost(host);
  bool status = false;

  CLI::App app{
      "lcpi-ship - send lcpid's closed windows to ClickHouse, each exactly once\n\n"
      "Reads the profile database (read only; a member of group lcpi may) and inserts\n"
      "each closed window's counts (per image identity, event and offset, with the\n"
      "event's period), its process rows (with cgroup, unit, container and pod) and,\n"
      "once for the whole fleet, each new image with its procedures (the names lcpid\n"
      "stored for the kernel, modules, JIT code and vDSO; an ELF file's symbols when\n"
      "the file read is the profiled build) into ClickHouse over HTTP. Tables are\n"
      "created if missing. A window counts in ClickHouse only once its row in\n"
      "DATABASE.windows is written, last, after asking whether it is there: a\n"
      "shipper killed or a server stopped mid-window sends it again, never twice.\n"
      "While the server is away windows wait in the database and the shipper retries\n"
      "with a doubling wait."};
  std::string url_file;
  app.add_option("--url", o.url,
                 "ClickHouse's HTTP interface, e.g. http://clickhouse:8123; for tests and "
                 "interactive use: a command line is visible to every local user (ps), so a "
                 "URL with a password belongs in --url-file");
  app.add_option("--url-file", url_file,
                 "a file holding the URL (with user:password@), read at start; refused if "
                 "others may read it (the unit gives it as a systemd credential)");
  app.add_option("--db", o.db_path, "lcpid's profile database ($LCPI_DB)")->capture_default_str();
  app.add_option("--state", o.state_path,
                 "lcpi-ship's own record of what it shipped (SQLite, created)")
      ->capture_default_str();
  app.add_option("--host", o.host,
                 "this host's name in the fleet (default: HOSTNAME/MACHINE-ID, the host name and "
                 "/etc/machine-id, so clones of one name stay apart)");
  app.add_option("--database", o.database, "ClickHouse database")->capture_default_str();
  app.add_flag("--once", o.once,
               "ship the windows closed now (retrying while the server is away), then exit");
  AddDuration(app, "--interval", &o.interval, "how often to look for newly closed windows");
  AddDuration(app, "--backoff-max", &o.backoff_max,
              "the longest wait between tries while ClickHouse fails (the first is 1s)");
  app.add_flag("--status", status,
               "print progress and lag (windows shipped and pending, the oldest pending one's "
               "age, the last error) from the database and state file, and exit");
  std::string cluster, shard_database = lcpi::fleet::kDefaultFleetDatabase;
  app.add_option("--create-distributed", cluster,
                 "instead of shipping: create, in --database, Distributed tables over the "
                 "tables each shard of CLUSTER (the server's <remote_servers>) holds in "
                 "--shard-database, for lcpiprof --fleet to read every shard through one "
                 "server; then exit (docs/fleet.md)")
      ->type_name("CLUSTER");
  app.add_option("--shard-database", shard_database,
                 "with --create-distributed: the shards' database (each host ships into one "
                 "shard's)")
      ->capture_default_str();
  app.footer(
      "Exit status: 0 done (or stopped by SIGTERM), 1 the profile database or state file\n"
      "cannot be used (or --once stopped before done), 2 a bad command line or URL.\n"
      "The server being away is not an error: it is retried, and --status shows it.");
  if (auto exit = lcpi::ParseCommandLine(app, argc, argv)) return *exit;
  if (status) return lcpi::ship::PrintStatus(o);
  if (!url_file.empty()) {
    if (!o.url.empty()) {
      std::fprintf(stderr, "lcpi-ship: give --url or --url-file, not both\n");
      return 2;
    }
    auto url = lcpi::fleet::ReadUrlFile(url_file);
    if (!url) {
      std::fprintf(stderr, "lcpi-ship: %s\n", lcpi::Printable(url.error().message()).c_str());
      return 2;
    }
    o.url = *url;
  }
  if (o.url.empty()) {
    std::fprintf(stderr,
                 "lcpi-ship: --url-file (or --url) is required (ClickHouse's HTTP interface)\n");
    return 2;
  }
  if (!cluster.empty()) return CreateDistributed(o.url, o.database, cluster, shard_database);
  if (o.host.empty()) {
    std::fprintf(stderr, "lcpi-ship: no host name: give --host\n");
    return 2;
  }
  return lcpi::ship::RunShipper(o);
}
