#!/usr/bin/env python3
"""gen-csrc.py - write a fixed, seeded set of C files for the compile workload.

Each file is ordinary C (headers, structs, loops, switches, recursion, string
handling) so that gcc spends its time in the same passes it spends it in on
real code. The same --seed and --files give byte-identical files.

usage: gen-csrc.py DIR --files N [--funcs K] [--seed S]
"""
import argparse
import os
import random

HEAD = """#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

struct node%(f)d { int key; double w; struct node%(f)d *l, *r; char name[16]; };
"""

BODIES = [
    # a loop nest with arithmetic
    """static long f%(f)d_%(i)d(const int *a, int n) {
  long s = %(c)d;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j += %(k)d) s += (a[i] * %(m)d) ^ (a[j] >> %(k)d);
  return s;
}
""",
    # a switch state machine
    """static int f%(f)d_%(i)d(const char *p) {
  int st = 0, n = 0;
  for (; *p; p++) {
    switch ((*p + st) %% %(k2)d) {
    case 0: st = 1; n += %(m)d; break;
    case 1: st = 2; n ^= *p; break;
    case 2: st = (st + %(k)d) & 3; n -= 1; break;
    case 3: n = n * 3 + st; break;
    default: st = 0; break;
    }
  }
  return n + st;
}
""",
    # a binary tree with recursion
    """static struct node%(f)d *f%(f)d_%(i)d(struct node%(f)d *t, int key) {
  if (!t) {
    t = calloc(1, sizeof *t);
    if (!t) abort();
    t->key = key; t->w = key * %(m)d.5;
    snprintf(t->name, sizeof t->name, "n%%d", key %% %(c)d);
    return t;
  }
  if (key < t->key) t->l = f%(f)d_%(i)d(t->l, key);
  else t->r = f%(f)d_%(i)d(t->r, key);
  return t;
}
""",
    # string handling
    """static size_t f%(f)d_%(i)d(char *out, size_t cap, const char *in) {
  size_t o = 0;
  for (size_t i = 0; in[i] && o + 2 < cap; i++) {
    if (in[i] == '%(ch)s') { out[o++] = '\\\\'; out[o++] = 'x'; }
    else if (in[i] >= 'a' && in[i] <= 'z') out[o++] = (char)(in[i] - 32);
    else out[o++] = in[i];
  }
  out[o] = 0;
  return o + strlen(out) %% %(k)d;
}
""",
    # floating point and a small matrix
    """static double f%(f)d_%(i)d(double m[%(k)d][%(k)d], int it) {
  double acc = 0;
  for (int t = 0; t < it; t++)
    for (int i = 0; i < %(k)d; i++)
      for (int j = 0; j < %(k)d; j++) {
        m[i][j] = m[i][j] * 0.%(m)d + m[j][i] / (1.0 + t);
        acc += m[i][j];
      }
  return acc;
}
""",
]


def write_file(path, f, funcs, rng):
    parts = [HEAD % {"f": f}]
    calls = []
    for i in range(funcs):
        kind = rng.randrange(len(BODIES))
        v = {"f": f, "i": i, "c": rng.randrange(1, 1000), "k": rng.randrange(2, 9),
             "k2": rng.randrange(4, 7), "m": rng.randrange(1, 99),
             "ch": rng.choice("abcxyz,;")}
        parts.append(BODIES[kind] % v)
        calls.append([
            "s += f%(f)d_%(i)d(a, n);",
            "s += f%(f)d_%(i)d(\"state\");",
            "t = f%(f)d_%(i)d(t, n + (int)s);",
            "s += (long)f%(f)d_%(i)d(b, sizeof b, \"text\");",
            "{ double m[%(k)d][%(k)d] = {{0}}; s += (long)f%(f)d_%(i)d(m, n); }",
        ][kind] % v)
    # one exported entry point that calls every function, so none is dropped
    parts.append("long entry%d(int n) {\n  long s = 0; int a[64]; char b[64] = {0};\n"
                 "  struct node%d *t = 0;\n"
                 "  for (int i = 0; i < 64; i++) a[i] = i * n;\n" % (f, f))
    parts.extend("  %s\n" % c for c in calls)
    parts.append("  return s + a[n & 63] + b[0] + (t ? t->key : 0);\n}\n")
    with open(path, "w") as out:
        out.write("".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--funcs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1997)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    for f in range(a.files):
        write_file(os.path.join(a.dir, "unit%02d.c" % f), f, a.funcs,
                   random.Random(a.seed * 1000 + f))


if __name__ == "__main__":
    main()
