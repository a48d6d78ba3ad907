// labels_test.cpp - lcpiprof's labels (report.h: ProfOptions::by and
// ::labels): process rows grouped by what their cgroup is called (--by
// unit|container|pod|cgroup), and the process (-P) and image views filtered
// by it (--label KEY=VALUE), exactly, from a real database; refused where
// the store cannot answer exactly (per procedure, pprof); rendered in text,
// CSV, JSON and HTML with the cgroup path escaped as every name is.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "libprofile/report/report.h"
#include "store/store_test_util.h"

using namespace lcpi;
using namespace lcpi::report;
using lcpi::testing::Ok;
using lcpi::testing::OpenOk;

namespace {

const std::string kId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kNginx = "/system.slice/nginx.service";
const std::string kDocker = "/system.slice/docker-" + kId + ".scope";
const std::string kHostile = "/user.slice/user-1000.slice/user@1000.service/\x1b[2Jevil";
// A sibling named as reports print kHostile: a backslash, then "x1b".
const std::string kLiteral = "/user.slice/user-1000.slice/user@1000.service/\\x1b[2Jevil";

struct Env {
  lcpi::testing::TempDir dir{"lcpi-labels-test"};
  std::unique_ptr<ProfileDb> db;
  // literal_sibling: one more process, in kLiteral.
  explicit Env(bool literal_sibling = false) {
    const std::string path = dir.File("p.db");
    {
      auto w = OpenOk(path);
      MergeBatch b;
      b.epoch = Ok(w->CurrentEpoch());
      b.images = {{"build-id:aa", "/usr/sbin/nginx", ImageKind::kUser},
                  {"build-id:bb", "/usr/lib/libc.so.6", ImageKind::kUser},
                  {"build-id:cc", "/bin/sh", ImageKind::kUser}};
      b.events = {{"cycles", "cpu-clock", 1000}};
      b.counts = {{0, 0, 16, 130}, {1, 0, 16, 61}, {2, 0, 16, 45}};
      auto row = [](uint32_t pid, const char* comm, uint32_t image, uint64_t n,
                    const std::string& cgroup) {
        ProcessRow r;
        r.pid = pid;
        r.comm = comm;
        r.image = image;
        r.count = n;
        r.cgroup = cgroup;
        return r;
      };
      b.processes = {row(10, "nginx", 0, 100, kNginx), row(10, "nginx", 1, 50, kNginx),
                     row(11, "nginx", 0, 30, kNginx),  row(20, "sh", 2, 40, kDocker),
                     row(20, "sh", 1, 10, kDocker),    row(30, "cron", 2, 5, ""),
                     row(40, "evil", 1, 1, kHostile)};
      if (literal_sibling) b.processes.push_back(row(41, "literal", 1, 2, kLiteral));
      REQUIRE(w->Merge(b));
    }
    db = OpenOk(path, DbMode::kReadOnly);
  }
};

Profile Build(ProfileDb& db, ProfOptions o) {
  auto p = BuildProfile(db, o);
  INFO((p ? std::string("ok") : p.error().ToString()));
  REQUIRE(p);
  return std::move(*p);
}

std::map<std::string, uint64_t> ByName(const Profile& p) {
  std::map<std::string, uint64_t> out;
  for (const Row& r : p.rows) out[r.name] += r.counts[0];
  return out;
}

LabelFilter Label(const std::string& text) {
  auto l = ParseLabel(text);
  INFO((l ? std::string("ok") : l.error().ToString()));
  REQUIRE(l);
  return *l;
}

}  // namespace

TEST_CASE("process rows grouped by a label of their cgroup (--by)", "[report]") {
  Env env;
  ProfOptions o;
  o.view = View::kLabels;
  o.by = "unit";
  auto units = ByName(Build(*env.db, o));
  CHECK(units.size() == 4);
  CHECK(units["nginx.service"] == 180);
  CHECK(units["docker-" + kId + ".scope"] == 50);
  CHECK(units["user@1000.service"] == 1);  // evil's own cgroup is no unit: its manager's is
  CHECK(units["[no unit]"] == 5);          // cron, in no cgroup known
  o.by = "container";
  auto containers = ByName(Build(*env.db, o));
  CHECK(containers.size() == 2);
  CHECK(containers[kId] == 50);
  CHECK(containers["[no container]"] == 186);
  o.by = "cgroup";
  auto cgroups = ByName(Build(*env.db, o));
  CHECK(cgroups[kNginx] == 180);
  CHECK(cgroups[kHostile] == 1);
  CHECK(cgroups["[no cgroup]"] == 5);
}

TEST_CASE("filtering by --label keeps exactly the processes of one unit or container", "[report]") {
  Env env;
  ProfOptions o;
  o.view = View::kProcesses;
  o.labels = {Label("unit=nginx.service")};
  Profile p = Build(*env.db, o);
  REQUIRE(p.rows.size() == 2);
  CHECK(p.rows[0].pid == 10);
  CHECK(p.rows[0].counts[0] == 150);
  CHECK(p.rows[1].pid == 11);
  CHECK(p.rows[1].counts[0] == 30);
  // A container by its id, or by docker's short id (12 digits or more).
  o.labels = {Label("container=" + kId)};
  CHECK(ByName(Build(*env.db, o)) == std::map<std::string, uint64_t>{{"sh", 50}});
  o.labels = {Label("container=" + kId.substr(0, 12))};
  CHECK(ByName(Build(*env.db, o)) == std::map<std::string, uint64_t>{{"sh", 50}});
  o.labels = {Label("container=" + kId.substr(0, 11))};
  CHECK(Build(*env.db, o).rows.empty());
  // A path with bytes reports escape is matched as reports print it, so
  // what an operator copies from a report selects it, and by its bytes.
  o.labels = {Label("cgroup=/user.slice/user-1000.slice/user@1000.service/\\x1b[2Jevil")};
  CHECK(ByName(Build(*env.db, o)) == std::map<std::string, uint64_t>{{"evil", 1}});
  o.labels = {Label("cgroup=" + kHostile)};
  CHECK(ByName(Build(*env.db, o)) == std::map<std::string, uint64_t>{{"evil", 1}});
  // Every filter must hold.
  o.labels = {Label("unit=nginx.service"), Label("container=" + kId)};
  CHECK(Build(*env.db, o).rows.empty());
  // -P --by: each process row says its label.
  o.labels.clear();
  o.by = "unit";
  for (const Row& r : Build(*env.db, o).rows) {
    if (r.pid == 10 || r.pid == 11) CHECK(r.label == "nginx.service");
    if (r.pid == 30) CHECK(r.label.empty());
  }
}

TEST_CASE("a value matched as reports print it never mixes two cgroups", "[report]") {
  // Reports print both kHostile and kLiteral as kLiteral's bytes: a filter
  // some path matches by its bytes selects that path alone.
  Env env(true);
  ProfOptions o;
  o.view = View::kProcesses;
  o.labels = {Label("cgroup=" + kLiteral)};
  CHECK(ByName(Build(*env.db, o)) == std::map<std::string, uint64_t>{{"literal", 2}});
  o.labels = {Label("cgroup=" + kHostile)};
  CHECK(ByName(Build(*env.db, o)) == std::map<std::string, uint64_t>{{"evil", 1}});
}

TEST_CASE("filtering the image view by --label sums the process rows of those processes",
          "[report]") {
  Env env;
  ProfOptions o;
  CHECK(ByName(Build(*env.db, o))["/usr/lib/libc.so.6"] == 61);
  o.labels = {Label("unit=nginx.service")};
  auto images = ByName(Build(*env.db, o));
  CHECK(images ==
        std::map<std::string, uint64_t>{{"/usr/sbin/nginx", 130}, {"/usr/lib/libc.so.6", 50}});
}

TEST_CASE("labels refused: bad keys, bad filters, views the store cannot answer", "[report]") {
  Env env;
  CHECK_FALSE(ParseLabel("unit"));
  CHECK_FALSE(ParseLabel("=x"));
  CHECK_FALSE(ParseLabel("bogus=x"));
  CHECK(ParseLabel("unit=").has_value());  // the processes with no unit
  ProfOptions o;
  o.view = View::kLabels;
  o.by = "bogus";
  auto bad = BuildProfile(*env.db, o);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == Errc::kInvalidArgument);
  o.by = "";
  CHECK_FALSE(BuildProfile(*env.db, o));  // --by needs a key
  // Counts per procedure are stored per image, not per process.
  o = {};
  o.view = View::kProcedures;
  o.labels = {Label("unit=nginx.service")};
  bad = BuildProfile(*env.db, o);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == Errc::kInvalidArgument);
  o.labels.clear();
  o.by = "unit";
  CHECK_FALSE(BuildProfile(*env.db, o));
}

TEST_CASE("labels in every format, the cgroup path escaped", "[report]") {
  Env env;
  ProfOptions o;
  o.view = View::kLabels;
  o.by = "cgroup";
  Profile p = Build(*env.db, o);
  RenderOptions ro;
  ro.width = 200;
  ro.format = Format::kText;
  std::string text = RenderProfile(p, ro);
  CHECK(text.find("\x1b") == std::string::npos);
  CHECK(text.find("\\x1b[2Jevil") != std::string::npos);
  CHECK(text.find(kNginx) != std::string::npos);
  ro.format = Format::kCsv;
  std::string csv = RenderProfile(p, ro);
  CHECK(csv.rfind("cgroup,cycles,", 0) == 0);
  CHECK(csv.find("\x1b") == std::string::npos);
  ro.format = Format::kJson;
  std::string json = RenderProfile(p, ro);
  CHECK(json.find("\"view\": \"labels\"") != std::string::npos);
  CHECK(json.find("\"by\": \"cgroup\"") != std::string::npos);
  CHECK(json.find("\"name\": \"" + kNginx + "\"") != std::string::npos);
  CHECK(json.find("\x1b") == std::string::npos);
  ro.format = Format::kHtml;
  std::string html = RenderProfile(p, ro);
  CHECK(html.find(kNginx) != std::string::npos);
  CHECK(html.find("\x1b") == std::string::npos);
  // -P with a label column and a filter, in CSV: the filter is stated.
  o.view = View::kProcesses;
  o.by = "unit";
  o.labels = {Label("unit=nginx.service")};
  ro.format = Format::kCsv;
  csv = RenderProfile(Build(*env.db, o), ro);
  CHECK(csv.rfind("command,pid,unit,cycles,", 0) == 0);
  CHECK(csv.find("nginx,10,nginx.service,150,") != std::string::npos);
  ro.format = Format::kJson;
  json = RenderProfile(Build(*env.db, o), ro);
  CHECK(json.find("\"labels\": \"unit=nginx.service\"") != std::string::npos);
}
