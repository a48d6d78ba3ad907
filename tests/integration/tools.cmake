# End-to-end tests of the analysis tools (label "tools"): a fixture writes a
# real profile database (tests/unit/report/report_fixture.h), then lcpiprof, lcpilist
# and lcpidiff run on it as a user would, and tools/check.cmake compares exit
# status, stdout (golden files under tests/golden/, JSON fields) and stderr.
add_executable(lcpi_tools_fixture ${CMAKE_CURRENT_LIST_DIR}/tools_fixture.cpp)
target_link_libraries(lcpi_tools_fixture PRIVATE lcpiprofile)

set(LCPI_TOOLS_DIR ${CMAKE_BINARY_DIR}/tools-fixture)
add_test(NAME "tools: fixture" COMMAND lcpi_tools_fixture ${LCPI_TOOLS_DIR})
set_tests_properties("tools: fixture" PROPERTIES FIXTURES_SETUP lcpi_tools LABELS tools)

# lcpi_tools_test(NAME TOOL tool ARGS a|b|c [RC n] [GOLDEN file] [STDOUT regex]
#                 [STDERR regex] [JSON path=value|...])
# ARGS and JSON are separated by '|'; @DIR@ in ARGS is the fixture directory.
function(lcpi_tools_test name)
  cmake_parse_arguments(T "" "TOOL;ARGS;RC;GOLDEN;STDOUT;STDERR;JSON" "" ${ARGN})
  if(NOT DEFINED T_RC)
    set(T_RC 0)
  endif()
  add_test(NAME "tools: ${name}"
    COMMAND ${CMAKE_COMMAND}
      "-DTOOL=$<TARGET_FILE:${T_TOOL}>" "-DARGS=${T_ARGS}" "-DRC=${T_RC}"
      "-DGOLDEN=${T_GOLDEN}" "-DSTDOUT=${T_STDOUT}" "-DSTDERR=${T_STDERR}"
      "-DJSON=${T_JSON}" "-DDIR=${LCPI_TOOLS_DIR}"
      "-DGOLDEN_DIR=${CMAKE_SOURCE_DIR}/tests/golden"
      -P ${CMAKE_CURRENT_LIST_DIR}/tools/check.cmake)
  set_tests_properties("tools: ${name}" PROPERTIES FIXTURES_REQUIRED lcpi_tools LABELS tools)
endfunction()

set(_db "--db|@DIR@/profiles.db")

# lcpiprof: the three views against golden files, --top/--keep/--sort, formats.
lcpi_tools_test(lcpiprof-images TOOL lcpiprof ARGS "${_db}|--epoch|base|--width|200"
  GOLDEN lcpiprof_images.txt)
lcpi_tools_test(lcpiprof-procedures TOOL lcpiprof ARGS "${_db}|--epoch|base|-p|--width|200"
  GOLDEN lcpiprof_procedures.txt STDERR "warning: cannot read /usr/lib/fake/libfake.so")
lcpi_tools_test(lcpiprof-processes TOOL lcpiprof
  ARGS "${_db}|--epoch|2|-P|--width|200|--no-header" GOLDEN lcpiprof_processes.txt)
lcpi_tools_test(lcpiprof-top-keep TOOL lcpiprof
  ARGS "${_db}|--epoch|base|-p|--keep|5|--top|2|--sort|imiss|--width|200|--no-header"
  GOLDEN lcpiprof_top_keep.txt)
lcpi_tools_test(lcpiprof-csv TOOL lcpiprof ARGS "${_db}|--epoch|base|--format|csv"
  GOLDEN lcpiprof_images.csv)
lcpi_tools_test(lcpiprof-json TOOL lcpiprof ARGS "${_db}|--epoch|base|-p|--format|json"
  JSON "version=1|view=procedures|rows.0.name=hot_loop|rows.0.counts.cycles=6000|rows.0.percent.cycles=58.5366|rows.1.name=warm|rows.1.counts.imiss=300|events.0.samples=10250|events.1.samples=500|omitted.rows=0|epochs.0.tag=base")
lcpi_tools_test(lcpiprof-newest TOOL lcpiprof ARGS "${_db}|--format|json"
  JSON "epochs.0.tag=after|events.0.samples=8000|rows.0.counts.cycles=6000|rows.0.kind=user")
lcpi_tools_test(lcpiprof-image-filter TOOL lcpiprof
  ARGS "${_db}|--epoch|base|-p|-i|kernel|--no-header|--width|200" GOLDEN lcpiprof_kernel.txt)
lcpi_tools_test(lcpiprof-help TOOL lcpiprof ARGS "--help" STDOUT "Examples:.*lcpiprof -p --top 20")
lcpi_tools_test(lcpilist-help-source-any TOOL lcpilist ARGS "--help"
  STDOUT "--source-any +read source files with your own rights")
lcpi_tools_test(lcpiprof-help-debuginfod-bounds TOOL lcpiprof ARGS "--help"
  STDOUT "DEBUGINFOD_MAXTIME")
# --format pprof (read by go tool pprof in pprof.cmake, label interop): binary,
# so only to a file; no per-process view; lcpiprof's only.
lcpi_tools_test(lcpiprof-pprof-no-output TOOL lcpiprof ARGS "${_db}|--format|pprof" RC 2
  STDERR "--format pprof writes a binary file: give -o FILE")
lcpi_tools_test(lcpiprof-pprof-processes TOOL lcpiprof
  ARGS "${_db}|-P|--format|pprof|-o|@DIR@/p.pb.gz" RC 2 STDERR "no per-process view")
lcpi_tools_test(lcpilist-no-pprof TOOL lcpilist ARGS "${_db}|--format|pprof|-o|@DIR@/l.pb.gz|main"
  RC 2 STDERR "pprof not in")
lcpi_tools_test(lcpiprof-help-pprof TOOL lcpiprof ARGS "--help" STDOUT "--format pprof -o FILE")
# --format html to stdout (the page in a browser: html.cmake), and -o to a
# file that cannot be made: an error naming it.
lcpi_tools_test(lcpiprof-html TOOL lcpiprof ARGS "${_db}|--epoch|base|--format|html"
  STDOUT "<caption>Samples per procedure, by cycles</caption>.*<th scope=\"row\" class=\"name\">hot_loop</th>.*Instructions of hot_loop"
  STDERR "cannot read /usr/lib/fake/libfake.so")
lcpi_tools_test(lcpiprof-output-error TOOL lcpiprof
  ARGS "${_db}|--format|csv|-o|@DIR@/no/such/dir/out.csv" RC 1
  STDERR "lcpiprof: error: .*/no/such/dir/out.csv: No such file or directory")

# Errors: clear message, non-zero exit status.
lcpi_tools_test(lcpiprof-no-db TOOL lcpiprof ARGS "--db|@DIR@/missing.db" RC 1
  STDERR "missing.db: no such database")
lcpi_tools_test(lcpiprof-garbage TOOL lcpiprof ARGS "--db|@DIR@/garbage.db" RC 1
  STDERR "not a database")
lcpi_tools_test(lcpiprof-no-epoch TOOL lcpiprof ARGS "${_db}|--epoch|nosuch" RC 1
  STDERR "no such epoch: nosuch")
lcpi_tools_test(lcpiprof-no-image TOOL lcpiprof ARGS "${_db}|-p|-i|nosuch.so" RC 1
  STDERR "no such image: nosuch.so")
lcpi_tools_test(lcpiprof-no-event TOOL lcpiprof ARGS "${_db}|--event|nosuch" RC 1
  STDERR "no such event: nosuch")

# A bad command line exits 2 in every tool, whichever CLI11 error it is.
lcpi_tools_test(lcpiprof-bad-format TOOL lcpiprof ARGS "${_db}|--format|yaml" RC 2
  STDERR "--format: yaml not in")
lcpi_tools_test(lcpiprof-unknown-option TOOL lcpiprof ARGS "${_db}|--no-such-option" RC 2
  STDERR "no-such-option")
lcpi_tools_test(lcpidiff-bad-number TOOL lcpidiff ARGS "${_db}|--width|abc" RC 2
  STDERR "Could not convert: --width = abc")
lcpi_tools_test(lcpictl-no-request TOOL lcpictl ARGS "nosuch" RC 2
  STDERR "A subcommand is required")
lcpi_tools_test(lcpid-bad-number TOOL lcpid ARGS "--flush-interval|soon" RC 2
  STDERR "--flush-interval: Value soon not in range")
# Review round 15, finding 13: holding every window for the shipper with no
# size cap would let a missing mark grow the database without bound.
lcpi_tools_test(lcpid-hold-unshipped-no-cap TOOL lcpid
  ARGS "-f|--db|@DIR@/hold.db|--hold-unshipped|@DIR@/state.db.mark|--max-db-size|0" RC 2
  STDERR "lcpid: --hold-unshipped needs a --max-db-size")

# lcpilist
lcpi_tools_test(lcpilist-hot-loop TOOL lcpilist ARGS "${_db}|--epoch|base|hot_loop|prog|--source"
  STDOUT "prog.c:6:  +s \\+= \\(i \\* i\\)")
lcpi_tools_test(lcpilist-lines TOOL lcpilist
  ARGS "${_db}|--epoch|base|hot_loop|--lines|--format|json"
  JSON "procedure=hot_loop|totals.cycles=6000|totals.imiss=100")
lcpi_tools_test(lcpilist-kernel TOOL lcpilist ARGS "${_db}|--epoch|base|do_syscall_64"
  STDOUT "0x1010 +800 +100.00" STDERR "no code for \\[kernel\\]")
lcpi_tools_test(lcpilist-range-missing-image TOOL lcpilist
  ARGS "${_db}|--epoch|base|--range|libfake.so:0x1000-0x1010"
  STDOUT "0x1000 +200 +66.67" STDERR "cannot read /usr/lib/fake/libfake.so")
lcpi_tools_test(lcpilist-no-proc TOOL lcpilist ARGS "${_db}|no_such_function" RC 1
  STDERR "no such procedure: no_such_function")
lcpi_tools_test(lcpilist-no-db TOOL lcpilist ARGS "--db|@DIR@/missing.db|main" RC 1
  STDERR "no such database")

# lcpidiff
lcpi_tools_test(lcpidiff-images TOOL lcpidiff ARGS "${_db}|--epoch|base|--epoch|after|--width|200"
  GOLDEN lcpidiff_images.txt)
lcpi_tools_test(lcpidiff-procedures TOOL lcpidiff
  ARGS "${_db}|-p|--width|200|--no-header" GOLDEN lcpidiff_procedures.txt)
lcpi_tools_test(lcpidiff-json TOOL lcpidiff ARGS "${_db}|--epoch|base|--epoch|after|--format|json"
  JSON "event=cycles|rows.0.name=/usr/lib/fake/libnew.so|rows.0.status=new|rows.1.count_a=8650|rows.1.count_b=6000|rows.2.status=vanished|a.samples=10250|b.samples=8000")
lcpi_tools_test(lcpidiff-two-dbs TOOL lcpidiff
  ARGS "--db|@DIR@/profiles.db|--db|@DIR@/garbage.db" RC 1 STDERR "not a database")

# Every tool in every format and view, byte for byte (the renderers share one
# table model, libprofile/report/table.h; these pin what each format prints).
set(_base "${_db}|--epoch|base")
lcpi_tools_test(lcpiprof-images-json TOOL lcpiprof ARGS "${_base}|--format|json"
  GOLDEN lcpiprof_images.json)
lcpi_tools_test(lcpiprof-procedures-csv TOOL lcpiprof ARGS "${_base}|-p|--format|csv"
  GOLDEN lcpiprof_procedures.csv)
lcpi_tools_test(lcpiprof-procedures-json TOOL lcpiprof ARGS "${_base}|-p|--format|json"
  GOLDEN lcpiprof_procedures.json)
lcpi_tools_test(lcpiprof-processes-csv TOOL lcpiprof ARGS "${_base}|-P|--format|csv"
  GOLDEN lcpiprof_processes.csv)
lcpi_tools_test(lcpiprof-processes-json TOOL lcpiprof ARGS "${_base}|-P|--format|json"
  GOLDEN lcpiprof_processes.json)
# Labels of the processes' cgroups (prog.service, a docker container, fake in
# none): grouped by unit in every format, filtered exactly, refused where the
# store cannot answer.
lcpi_tools_test(lcpiprof-by-unit TOOL lcpiprof ARGS "${_base}|--by|unit|--width|200"
  GOLDEN lcpiprof_by_unit.txt)
lcpi_tools_test(lcpiprof-by-unit-csv TOOL lcpiprof ARGS "${_base}|--by|unit|--format|csv"
  GOLDEN lcpiprof_by_unit.csv)
lcpi_tools_test(lcpiprof-by-unit-json TOOL lcpiprof ARGS "${_base}|--by|unit|--format|json"
  GOLDEN lcpiprof_by_unit.json)
lcpi_tools_test(lcpiprof-by-container-html TOOL lcpiprof ARGS "${_base}|--by|container|--format|html"
  STDOUT "3f1c2a9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928170615243f")
lcpi_tools_test(lcpiprof-label-processes TOOL lcpiprof
  ARGS "${_base}|-P|--by|unit|--label|unit=prog.service|--format|csv"
  GOLDEN lcpiprof_label_processes.csv)
lcpi_tools_test(lcpiprof-label-images TOOL lcpiprof
  ARGS "${_base}|--label|container=3f1c2a9b8e7d|--format|json"
  JSON "rows.0.counts.cycles=100|rows.0.name=[unknown sh]|labels=container=3f1c2a9b8e7d")
lcpi_tools_test(lcpiprof-label-bad TOOL lcpiprof ARGS "${_base}|--label|color=red"
  RC 2 STDERR "no label color")
lcpi_tools_test(lcpiprof-by-bad TOOL lcpiprof ARGS "${_base}|--by|color"
  RC 1 STDERR "cannot group by color")
lcpi_tools_test(lcpiprof-label-procedures TOOL lcpiprof ARGS "${_base}|-p|--label|unit=x"
  RC 2 STDERR "excludes")
lcpi_tools_test(lcpiprof-label-pprof TOOL lcpiprof
  ARGS "${_base}|--label|unit=x|--format|pprof|-o|@DIR@/label.pb.gz"
  RC 2 STDERR "stored per image, not per process")
lcpi_tools_test(lcpiprof-top-keep-json TOOL lcpiprof
  ARGS "${_base}|-p|--keep|5|--top|2|--sort|imiss|--format|json" GOLDEN lcpiprof_top_keep.json)
foreach(format txt csv json)
  set(_f "--format|${format}")
  if(format STREQUAL "txt")
    set(_f "--width|200")
  endif()
  lcpi_tools_test(lcpilist-golden-${format} TOOL lcpilist ARGS "${_base}|hot_loop|prog|${_f}"
    GOLDEN lcpilist_hot_loop.${format})
  lcpi_tools_test(lcpilist-source-${format} TOOL lcpilist
    ARGS "${_base}|hot_loop|prog|--source|${_f}" GOLDEN lcpilist_source.${format})
  lcpi_tools_test(lcpilist-lines-${format} TOOL lcpilist ARGS "${_base}|hot_loop|--lines|${_f}"
    GOLDEN lcpilist_lines.${format})
  lcpi_tools_test(lcpilist-range-${format} TOOL lcpilist
    ARGS "${_base}|--range|libfake.so:0x1000-0x1010|${_f}" GOLDEN lcpilist_range.${format})
  if(NOT format STREQUAL "txt")
    lcpi_tools_test(lcpidiff-images-${format} TOOL lcpidiff
      ARGS "${_db}|--epoch|base|--epoch|after|${_f}" GOLDEN lcpidiff_images.${format})
    lcpi_tools_test(lcpidiff-procedures-${format} TOOL lcpidiff ARGS "${_db}|-p|${_f}"
      GOLDEN lcpidiff_procedures.${format})
  endif()
endforeach()

# Time windows (windows.db, tools_fixture.cpp): epoch 1 "morning" at
# 2026-01-01T08:00Z, windows 2 and 3 at 09:00 and 10:00, epoch 4 "noon" at
# 12:00, window 5 from 13:00; epoch i holds 110 * i cycles (100 * i on
# hot_loop), sampled every 1000 up to 3 and every 2000 after. A range sums
# the windows it overlaps: 09:00-11:00 is 2 + 3 = 550 samples. Epochs of
# different periods add up weighed by their periods, in samples at the
# newest one's: all five are (110 + 220 + 330) / 2 + 440 + 550 = 1320.
set(_win "--db|@DIR@/windows.db")
lcpi_tools_test(since-until TOOL lcpiprof
  ARGS "${_win}|--since|2026-01-01T09:00Z|--until|2026-01-01T11:00:00Z|--format|json"
  JSON "events.0.samples=550|epochs.0.id=2|epochs.1.id=3|since=1767258000|until=1767265200|stats.attributed=550")
lcpi_tools_test(since-offset TOOL lcpiprof
  ARGS "${_win}|--since|2026-01-01 10:00+01:00|--until|2026-01-01T12:00+0100|--format|json"
  JSON "events.0.samples=550|epochs.0.id=2")
lcpi_tools_test(since-open-end TOOL lcpiprof ARGS "${_win}|--since|2026-01-01T13:30Z|--format|json"
  JSON "events.0.samples=550|epochs.0.id=5")
lcpi_tools_test(since-relative TOOL lcpiprof ARGS "${_win}|--since|100000h|--format|json"
  JSON "events.0.samples=1320|epochs.4.id=5")
lcpi_tools_test(since-text TOOL lcpiprof
  ARGS "${_win}|--since|2026-01-01T09:00Z|--until|2026-01-01T11:00Z|--width|200"
  STDOUT "# epoch:    2 summed \\(2, 3\\)\n# time:     2026-01-01T09:00:00Z to 2026-01-01T12:00:00Z \\(asked: 2026-01-01T09:00:00Z to 2026-01-01T11:00:00Z\\)")
lcpi_tools_test(since-in-span TOOL lcpiprof
  ARGS "${_win}|--epoch|morning|--since|2026-01-01T09:30Z|--format|json"
  JSON "events.0.samples=550|epochs.0.id=2|epochs.1.id=3")
lcpi_tools_test(tag-span TOOL lcpiprof ARGS "${_win}|--epoch|morning|--format|json"
  JSON "events.0.samples=660|epochs.0.tag=morning|epochs.2.id=3")
# The HTML page plots each window of a selection (here the tag's span:
# epoch 1 and windows 2 and 3, prog 100 * i of 110 * i cycles: 90.91 % each),
# not only --epoch all; one window alone gets a note that says what to ask.
lcpi_tools_test(html-window-plot TOOL lcpiprof ARGS "${_win}|--epoch|morning|--format|html"
  STDOUT "<title id=\"epoch-plot-title\">Share of cycles samples per epoch and window.*<th scope=\"col\" class=\"n\">window 3</th>.*<td class=\"n\">90.91</td><td class=\"n\">90.91</td><td class=\"n\">90.91</td></tr>")
lcpi_tools_test(html-one-window TOOL lcpiprof ARGS "${_win}|--epoch|2|--format|html"
  STDOUT "<p class=\"note\">One window selected\\. With several \\(<code>--epoch all</code>, a tag's span, or <code>--since</code>/<code>--until</code>\\)")
lcpi_tools_test(window-by-id TOOL lcpiprof ARGS "${_win}|--epoch|1|--format|json"
  JSON "events.0.samples=110")
# Each window's own period, after the configuration changed (2000 now).
lcpi_tools_test(window-period TOOL lcpiprof ARGS "${_win}|--epoch|2|--format|json"
  JSON "events.0.period=1000|events.0.used=cpu-clock")
lcpi_tools_test(window-period-new TOOL lcpiprof ARGS "${_win}|--epoch|5|--format|json"
  JSON "events.0.period=2000")
lcpi_tools_test(lcpilist-since TOOL lcpilist
  ARGS "${_win}|hot_loop|--since|2026-01-01T09:00Z|--until|2026-01-01T11:00Z|--format|json"
  JSON "totals.cycles=500")
lcpi_tools_test(lcpidiff-since TOOL lcpidiff
  ARGS "${_win}|--since|2026-01-01T08:00Z|--until|2026-01-01T09:00Z|--since|2026-01-01T12:00Z|--until|2026-01-01T13:00Z|--format|json"
  JSON "a.samples=110|b.samples=440|a.epochs.0.id=1|b.epochs.0.id=4")
lcpi_tools_test(since-bad TOOL lcpiprof ARGS "${_win}|--since|yesterday" RC 2
  STDERR "lcpiprof: error: --since: 'yesterday' is not a time .*give a time such as 2h")
lcpi_tools_test(until-bad-date TOOL lcpilist ARGS "${_win}|hot_loop|--until|2026-02-30" RC 2
  STDERR "lcpilist: error: --until: '2026-02-30' is not a time \\(no such day")
lcpi_tools_test(since-after-until TOOL lcpiprof
  ARGS "${_win}|--since|2026-01-01T11:00Z|--until|2026-01-01T09:00Z" RC 1
  STDERR "--since 2026-01-01T11:00:00Z is not before --until 2026-01-01T09:00:00Z")
lcpi_tools_test(since-nothing TOOL lcpiprof ARGS "${_win}|--until|2025-01-01" RC 1
  STDERR "no epoch or window between the first and 2025-01-01T.* \\(lcpiprof --epochs lists them\\)")
# lcpiprof --epochs: what is stored.
lcpi_tools_test(epochs-json TOOL lcpiprof ARGS "${_win}|--epochs|--format|json"
  JSON "view=epochs|rows.0.id=1|rows.0.kind=epoch|rows.0.tag=morning|rows.0.started_utc=2026-01-01T08:00:00Z|rows.0.ended=1767258000|rows.1.kind=window|rows.1.span=morning|rows.2.samples=330|rows.2.rows=4|rows.4.span=noon|rows.4.ended_utc=current")
lcpi_tools_test(epochs-text TOOL lcpiprof ARGS "${_win}|--epochs"
  STDOUT "id +kind +started +ended +samples +rows +~bytes +span\n +1 +epoch +2026-01-01T08:00:00Z +2026-01-01T09:00:00Z +110 +4 +[0-9]+ +morning\n +2 +window +2026-01-01T09:00:00Z")
lcpi_tools_test(epochs-csv TOOL lcpiprof ARGS "${_win}|--epochs|--format|csv"
  STDOUT "^id,kind,tag,span,started,ended,started_unix,ended_unix,samples,rows,approx_bytes\n1,epoch,morning,morning,2026-01-01T08:00:00Z,2026-01-01T09:00:00Z,1767254400,1767258000,110,4,")
lcpi_tools_test(epochs-with-since TOOL lcpiprof ARGS "${_win}|--epochs|--since|1h" RC 2
  STDERR "--epochs lists everything stored")
lcpi_tools_test(no-epoch-hint TOOL lcpiprof ARGS "${_win}|--epoch|nosuch" RC 1
  STDERR "no such epoch: nosuch \\(lcpiprof --epochs lists them\\)")
# Over windows whose periods differ, the report says so.
lcpi_tools_test(window-periods-mixed TOOL lcpiprof ARGS "${_win}|--epoch|all|--format|json"
  JSON "events.0.period=2000|events.0.periods.0=1000|events.0.periods.1=2000")
lcpi_tools_test(window-periods-mixed-text TOOL lcpiprof ARGS "${_win}|--since|2026-01-01T10:30Z|--until|2026-01-01T12:30Z"
  STDOUT "every 2000 \\(the newest epoch's; these epochs used 1000, 2000\\): 770 samples")
# lcpidiff --callers/--callees: the callers of a procedure in two epochs of
# stacks.db, leaf's 60/40 through mid_a/mid_b before and 30/70 after.
set(_stacks "--db|@DIR@/stacks.db|--epoch|stacks|--epoch|after")
lcpi_tools_test(lcpidiff-callers-json TOOL lcpidiff
  ARGS "${_stacks}|--callers|leaf|--format|json"
  JSON "view=callers|symbol=leaf|rows.0.name=mid_a|rows.0.count_a=60|rows.0.count_b=30|rows.0.percent_a=60.0|rows.0.percent_b=30.0|rows.0.delta=-30.0|rows.1.name=mid_b|rows.1.count_b=70|a.samples=100|b.samples=100")
lcpi_tools_test(lcpidiff-callers-text TOOL lcpidiff
  ARGS "${_stacks}|--callers|leaf|--no-header" STDOUT "40.00 +70.00 +.30.00 +40 +70 +mid_b")
lcpi_tools_test(lcpidiff-callees TOOL lcpidiff ARGS "${_stacks}|--callees|top|--format|csv"
  STDOUT "callee,image,count_a,count_b")
lcpi_tools_test(lcpidiff-callers-not-through TOOL lcpidiff
  ARGS "${_stacks}|--callers|no_such_proc" RC 1 STDERR "no call stack of the epochs read passes through 'no_such_proc'")
lcpi_tools_test(lcpidiff-callers-with-p TOOL lcpidiff ARGS "${_stacks}|--callers|leaf|-p" RC 2
  STDERR "--callers and --callees compare stacks: not with -p or -e")
# A 256-character procedure name in the callees table: cut in the middle to
# --width in text (its head and its end in view).
lcpi_tools_test(lcpiprof-callees-long-name TOOL lcpiprof
  ARGS "--db|@DIR@/stacks.db|--epoch|stacks|--callees|main|--width|80|--no-header"
  STDOUT "lcpi::fixture::v+\\.\\.\\.[:a-z_]*named_frame  \\[kernel\\]")
