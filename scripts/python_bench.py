#!/usr/bin/env python3
"""Decode speed of a Python Session.step loop against `offgraph bench` on the same program.

    /usr/bin/python3 scripts/python_bench.py PROGRAM [-p 128] [-n 64] [-r 5] [--threads N]

Both fill the cache with a prefill of -p tokens, then decode -n tokens one step each with the
last row's logits; each side takes the median of -r timed runs (after a warm-up run), in
--rounds alternating rounds, and the median round is reported. The
Python loop includes everything a user pays: argument conversion, the GIL release, the copy of
the logits row into a new numpy array. Prints figures, asserts nothing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "release", "src", "python"))
import offgraph  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("program")
    ap.add_argument("-p", type=int, default=128)
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("-r", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of both measurements")
    ap.add_argument("--bin", default=os.environ.get("OFFGRAPH_BIN", os.path.join(ROOT, "build", "release", "src", "cli", "offgraph")))
    a = ap.parse_args()

    program = offgraph.Program(a.program)
    vocab = program.vocab_size
    prompt = [(7 * i + 1) % vocab for i in range(a.p)]
    gen = [(13 * i + 2) % vocab for i in range(a.n)]
    chunk = program.prefill_chunk_size
    session = program.session(threads=a.threads)

    def python_decode():
        runs = []
        for run in range(a.r + 1):
            session.clear()
            for i in range(0, a.p, chunk):
                session.step(prompt[i:i + chunk])
            t0 = time.perf_counter()
            for t in gen:
                session.step([t])
            if run > 0:
                runs.append(a.n / (time.perf_counter() - t0))
        return statistics.median(runs)

    def cli_decode():
        out = subprocess.run([a.bin, "bench", "-m", a.program, "-p", str(a.p), "-n", str(a.n), "-r", str(a.r),
                              "--threads", str(a.threads), "--bw-mb", "64", "--json"],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)["decode_tok_s"]

    # Alternate the two, so that load from other processes falls on both alike.
    pys, clis = [], []
    for _ in range(a.rounds):
        pys.append(python_decode())
        clis.append(cli_decode())
    py, cli = statistics.median(pys), statistics.median(clis)
    print(f"program {a.program}: vocab {vocab}, prefill {a.p}, decode {a.n}, runs {a.r}, rounds {a.rounds}")
    print("per round (bench, python): " + ", ".join(f"({c:.1f}, {p:.1f})" for c, p in zip(clis, pys)))
    print(f"offgraph bench decode  {cli:10.1f} tok/s")
    print(f"python Session.step    {py:10.1f} tok/s   ({py / cli:.3f} of bench)")


if __name__ == "__main__":
    main()
