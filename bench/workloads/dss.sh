#!/bin/bash
# dss.sh - the decision-support workload: the sqlite3 command-line shell runs
# TPC-H-like queries (dss-queries.sql: scans, group-bys, joins of up to six
# tables) over a seeded, generated database (gen-tpch.py), read-only.
#
#   dss.sh [--size full|quick|guest] [--data DIR] [--prepare]
#
# full: 60,000 orders (about 240,000 lineitems), the queries run 6 times,
# quick: 20,000 orders 4 times, guest: 500 orders once.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

ORDERS=$(pick 60000 20000 500)
REPEAT=$(pick 6 4 1)
STAMP="orders=$ORDERS seed=1997"
if ! prepared "$STAMP"; then
	rm -rf "$DATA" && mkdir -p "$DATA"
	python3 "$WL_HERE/gen-tpch.py" "$DATA/tpch.db" --orders "$ORDERS" --seed 1997
	mark_prepared "$STAMP"
fi
[ "$PREPARE_ONLY" = 1 ] && exit 0

for _ in $(seq "$REPEAT"); do
	sqlite3 -readonly "$DATA/tpch.db" <"$WL_HERE/dss-queries.sql" >/dev/null
done
