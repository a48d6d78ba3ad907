# clickhouse_server.sh - sourced by the fleet tests: starts a clickhouse-server
# of the test's own (not the system service) as a child process, on free
# loopback ports, with its config, data and logs under a folder of the test.
#
#   ch_start DIR     writes DIR/config.xml and DIR/users.xml, starts the
#                    server, waits until it answers; sets CH_PID, CH_URL, CH_HTTP_PORT
#   ch_stop          stops it (SIGTERM, then SIGKILL after 10 s; 18.16 serves
#                    a client's open keep-alive connection while it shuts down)
#   ch_kill          kills it (SIGKILL): the server gone at once
#   ch_query SQL     runs SQL over HTTP, prints the answer (TabSeparated)
#
# CH_EXTRA_CONFIG, when set, is written into config.xml as it is (e.g. a
# <remote_servers> section: fleet_report.sh's two shards).
#
# Ports: picked free by the kernel (bind to port 0) just before the start;
# the same ports are kept by ch_restart so a shipper's URL stays valid.
ch_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

ch_write_config() {
  local dir=$1
  mkdir -p "$dir/data/" "$dir/tmp/" "$dir/log/"
  cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/error.log</errorlog><console>0</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$CH_HTTP_PORT</http_port>
  <tcp_port>$CH_TCP_PORT</tcp_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
  ${CH_EXTRA_CONFIG:-}
</yandex>
XML
  cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>1000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
}

ch_launch() {
  clickhouse-server --config-file="$CH_DIR/config.xml" >"$CH_DIR/log/stdout" 2>&1 &
  CH_PID=$!
  local t0=$(date +%s.%N)
  for _ in $(seq 300); do
    if curl -sf "$CH_URL/?query=SELECT%201" >/dev/null 2>&1; then
      CH_START_SECONDS=$(python3 -c "print(f'{$(date +%s.%N)-$t0:.2f}')")
      return 0
    fi
    kill -0 $CH_PID 2>/dev/null || { echo "clickhouse-server exited:"; tail -20 "$CH_DIR/log/error.log" "$CH_DIR/log/stdout"; return 1; }
    sleep 0.05
  done
  echo "clickhouse-server did not answer in 15 s"; tail -20 "$CH_DIR/log/error.log"; return 1
}

ch_start() {
  CH_DIR=$1
  CH_HTTP_PORT=$(ch_free_port) CH_TCP_PORT=$(ch_free_port)
  CH_URL=http://127.0.0.1:$CH_HTTP_PORT
  ch_write_config "$CH_DIR"
  ch_launch
}

ch_stop() {
  [ -n "${CH_PID:-}" ] || return 0
  kill $CH_PID 2>/dev/null || true
  for _ in $(seq 100); do kill -0 $CH_PID 2>/dev/null || break; sleep 0.1; done
  kill -9 $CH_PID 2>/dev/null || true
  wait $CH_PID 2>/dev/null || true
  CH_PID=
}

ch_kill() {
  [ -n "${CH_PID:-}" ] || return 0
  kill -9 $CH_PID 2>/dev/null || true
  wait $CH_PID 2>/dev/null || true
  CH_PID=
}

ch_restart() { ch_launch; }

ch_query() { curl -sS --fail-with-body "$CH_URL/" --data-binary "$1"; }
