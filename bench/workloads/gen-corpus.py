#!/usr/bin/env python3
"""gen-corpus.py - write a seeded, compressible text corpus for the compress
workload: words drawn from a Zipf-like vocabulary, with numbers, punctuation
and line structure, so xz and bzip2 find real redundancy (about 3-4:1), not
the all-zeros or all-random extremes. The same --seed and --mb give the same
bytes.

usage: gen-corpus.py FILE --mb N [--seed S]
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("file")
    ap.add_argument("--mb", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1997)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    vocab = ["".join(rng.choice(letters[:8 + i % 18]) for _ in range(rng.randint(2, 11)))
             for i in range(5000)]
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    want = int(a.mb * 1024 * 1024)
    size = 0
    with open(a.file, "w") as out:
        while size < want:
            words = rng.choices(vocab, weights, k=rng.randint(4, 18))
            if rng.random() < 0.3:
                words.insert(rng.randrange(len(words)), str(rng.randrange(100000)))
            line = " ".join(words) + rng.choice([".", ",", ";", "", "!"]) + "\n"
            out.write(line)
            size += len(line)


if __name__ == "__main__":
    main()
