#!/usr/bin/env python3
"""gen-tpch.py - build a seeded, TPC-H-like SQLite database for the dss
workload: region, nation, supplier, customer, part, orders and lineitem with
TPC-H's columns that the queries use, value ranges and ratios (about 4
lineitems per order, 10 orders per customer), and indexes on the join keys.
The same --seed and --orders give the same rows.

usage: gen-tpch.py DB --orders N [--seed S]
"""
import argparse
import datetime
import os
import random
import sqlite3

SCHEMA = """
CREATE TABLE region(r_regionkey INTEGER PRIMARY KEY, r_name TEXT);
CREATE TABLE nation(n_nationkey INTEGER PRIMARY KEY, n_name TEXT, n_regionkey INTEGER);
CREATE TABLE supplier(s_suppkey INTEGER PRIMARY KEY, s_name TEXT, s_nationkey INTEGER,
                      s_acctbal REAL);
CREATE TABLE customer(c_custkey INTEGER PRIMARY KEY, c_name TEXT, c_nationkey INTEGER,
                      c_acctbal REAL, c_mktsegment TEXT);
CREATE TABLE part(p_partkey INTEGER PRIMARY KEY, p_name TEXT, p_brand TEXT, p_type TEXT,
                  p_size INTEGER, p_retailprice REAL);
CREATE TABLE orders(o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER, o_orderstatus TEXT,
                    o_totalprice REAL, o_orderdate TEXT, o_orderpriority TEXT);
CREATE TABLE lineitem(l_orderkey INTEGER, l_partkey INTEGER, l_suppkey INTEGER,
                      l_linenumber INTEGER, l_quantity REAL, l_extendedprice REAL,
                      l_discount REAL, l_tax REAL, l_returnflag TEXT, l_linestatus TEXT,
                      l_shipdate TEXT, l_shipmode TEXT);
"""
INDEXES = """
CREATE INDEX lineitem_order ON lineitem(l_orderkey);
CREATE INDEX lineitem_part ON lineitem(l_partkey);
CREATE INDEX orders_cust ON orders(o_custkey);
"""
REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
SHIPMODES = ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]
TYPES = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("db")
    ap.add_argument("--orders", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1997)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if os.path.exists(a.db):
        os.unlink(a.db)
    db = sqlite3.connect(a.db)
    db.executescript(SCHEMA)
    ncust = max(10, a.orders // 10)
    nsupp = max(5, a.orders // 150)
    npart = max(20, a.orders // 8)
    db.executemany("INSERT INTO region VALUES(?,?)", enumerate(REGIONS))
    db.executemany("INSERT INTO nation VALUES(?,?,?)",
                   [(n, "NATION%02d" % n, n % 5) for n in range(25)])
    db.executemany("INSERT INTO supplier VALUES(?,?,?,?)",
                   [(s, "Supplier#%06d" % s, rng.randrange(25),
                     round(rng.uniform(-999, 9999), 2)) for s in range(nsupp)])
    db.executemany("INSERT INTO customer VALUES(?,?,?,?,?)",
                   [(c, "Customer#%06d" % c, rng.randrange(25),
                     round(rng.uniform(-999, 9999), 2), rng.choice(SEGMENTS))
                    for c in range(ncust)])
    db.executemany("INSERT INTO part VALUES(?,?,?,?,?,?)",
                   [(p, "part %d" % p, "Brand#%d%d" % (rng.randint(1, 5), rng.randint(1, 5)),
                     rng.choice(TYPES), rng.randint(1, 50), round(900 + p % 1000 + 0.01 * p, 2))
                    for p in range(npart)])
    start = datetime.date(1992, 1, 1)
    orders, items = [], []
    for o in range(a.orders):
        date = start + datetime.timedelta(days=rng.randrange(2400))
        total = 0.0
        for ln in range(rng.randint(1, 7)):
            qty = rng.randint(1, 50)
            price = round(qty * rng.uniform(900, 2000), 2)
            total += price
            ship = date + datetime.timedelta(days=rng.randint(1, 121))
            items.append((o, rng.randrange(npart), rng.randrange(nsupp), ln, qty, price,
                          rng.randint(0, 10) / 100, rng.randint(0, 8) / 100,
                          rng.choice("RAN"), rng.choice("OF"), ship.isoformat(),
                          rng.choice(SHIPMODES)))
        orders.append((o, rng.randrange(ncust), rng.choice("OFP"), round(total, 2),
                       date.isoformat(), rng.choice(PRIORITIES)))
    db.executemany("INSERT INTO orders VALUES(?,?,?,?,?,?)", orders)
    db.executemany("INSERT INTO lineitem VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", items)
    db.executescript(INDEXES)
    db.commit()
    db.execute("ANALYZE")
    db.commit()
    db.close()


if __name__ == "__main__":
    main()
