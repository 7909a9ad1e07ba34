#!/usr/bin/env bash
# offgraph and llama.cpp side by side on the same checkpoints, in one run, interleaved
# (llama-bench, offgraph bench, llama-bench, offgraph bench, ...), 2 threads each: the only
# kind of speed comparison these machines allow (they drift 10-20 % within an hour).
#
# usage: bash scripts/llamacpp_compare.sh LABEL=GGUF:PROGRAM [LABEL=GGUF:PROGRAM ...]
#   e.g. llama-bf16=../anchors/gguf/llama-3.2-1b.bf16.gguf:build/bench/llama-3.2-1b.bf16.ogp
# environment:
#   PROMPTS   prefill lengths (default "128"; e.g. "128 1024")
#   N         decode tokens (default 32; measured with the first prompt length only)
#   R         interleaved rounds (default 3; the table shows medians)
#   THREADS   threads of both (default 2)
#   LLAMA_BIN directory of llama-bench (default ../anchors/llama.cpp/build/bin, as
#             ../shared/anchors/build-llamacpp.sh builds it)
#   OFFGRAPH  the binary (default build/release/src/cli/offgraph)
#   OUT       directory for the raw JSON of every run (default build/bench/compare)
#
# llama.cpp decodes from an empty context (llama-bench's tg), offgraph after its prefill
# (a little more attention per token): the decode ratio is slightly conservative for us.
# Prints a markdown table: tok/s of each (medians), their ratio, and the machine's flags.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
llama_bin="${LLAMA_BIN:-$root/../anchors/llama.cpp/build/bin}"
og="${OFFGRAPH:-$root/build/release/src/cli/offgraph}"
out="${OUT:-$root/build/bench/compare}"
PROMPTS="${PROMPTS:-128}" N="${N:-32}" R="${R:-3}" THREADS="${THREADS:-2}"
[ $# -ge 1 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
[ -x "$llama_bin/llama-bench" ] || { echo "no llama-bench in $llama_bin (bash ../shared/anchors/build-llamacpp.sh)" >&2; exit 1; }
[ -x "$og" ] || { echo "no offgraph binary at $og (bash scripts/build.sh, or set OFFGRAPH)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.json "$out"/ticks.*

first_p=${PROMPTS%% *}
# CPU ticks (all CPUs) and their stolen part before the run: the summary prints the share
# the hypervisor withheld, which lowers both sides' figures alike but makes them noisy.
read -r _ u n s i w q sq st _ < /proc/stat; echo "$((u+n+s+i+w+q+sq+st)) $st" > "$out/ticks.before"
for pair in "$@"; do
  label=${pair%%=*}; files=${pair#*=}; gguf=${files%%:*}; prog=${files#*:}
  [ -f "$gguf" ] || { echo "$label: no GGUF file $gguf" >&2; exit 1; }
  [ -f "$prog" ] || { echo "$label: no program $prog" >&2; exit 1; }
  for p in $PROMPTS; do
    n=0; [ "$p" = "$first_p" ] && n=$N
    for r in $(seq 1 "$R"); do
      echo "== $label pp$p tg$n round $r" >&2
      "$llama_bin/llama-bench" -m "$gguf" -t "$THREADS" -p "$p" -n "$n" -r 1 -o json > "$out/$label.p$p.llama.$r.json" 2>/dev/null
      "$og" bench -m "$prog" -p "$p" -n "$([ "$n" = 0 ] && echo 1 || echo "$n")" -r 1 --threads "$THREADS" --json \
        > "$out/$label.p$p.og.$r.json" 2>/dev/null
    done
  done
done

read -r _ u n s i w q sq st _ < /proc/stat; echo "$((u+n+s+i+w+q+sq+st)) $st" > "$out/ticks.after"
/usr/bin/python3 - "$out" "$PROMPTS" "$N" "$R" "$@" <<'EOF'
import json, statistics, sys, glob
out, prompts, n, rounds = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), int(sys.argv[4])
labels = [a.split("=", 1)[0] for a in sys.argv[5:]]
flags = open("/proc/cpuinfo").read().split("flags\t\t: ", 1)[1].split("\n", 1)[0].split()
keep = [f for f in flags if f.startswith(("avx", "amx", "fma", "f16c"))]
model = open("/proc/cpuinfo").read().split("model name\t: ", 1)[1].split("\n", 1)[0]
print(f"machine: {model}; flags: {' '.join(keep)}")
(t0, s0), (t1, s1) = [map(int, open(f"{out}/ticks.{w}").read().split()) for w in ("before", "after")]
print(f"medians of {rounds} interleaved rounds; tok/s; the hypervisor withheld {100 * (s1 - s0) / max(1, t1 - t0):.0f} % of CPU time (steal)\n")
print("| model | test | llama.cpp | offgraph | offgraph / llama.cpp | offgraph of peak |")
print("|---|---|---:|---:|---:|---:|")
def med(xs): return statistics.median(xs) if xs else float("nan")
for label in labels:
    for i, p in enumerate(prompts):
        tests = [("pp", p)] + ([("tg", n)] if i == 0 and n > 0 else [])
        for kind, size in tests:
            theirs, ours, peak = [], [], []
            for r in range(1, rounds + 1):
                try:
                    for e in json.load(open(f"{out}/{label}.p{p}.llama.{r}.json")):
                        if (kind == "pp" and e["n_prompt"] == int(p) and e["n_gen"] == 0) or \
                           (kind == "tg" and e["n_gen"] == int(size) and e["n_prompt"] == 0):
                            theirs.append(e["avg_ts"])
                    j = json.load(open(f"{out}/{label}.p{p}.og.{r}.json"))
                    ours.append(j["prefill_tok_s"] if kind == "pp" else j["decode_tok_s"])
                    if kind == "pp" and "prefill_peak_fraction" in j: peak.append(j["prefill_peak_fraction"])
                    if kind == "tg" and "decode_floor_fraction" in j: peak.append(j["decode_floor_fraction"])
                except (OSError, ValueError, KeyError) as e:
                    print(f"  ({label} {kind}{size} round {r}: {e})", file=sys.stderr)
            t, o = med(theirs), med(ours)
            extra = f"{med(peak):.2f} of {'compute peak' if kind == 'pp' else 'bandwidth floor'}" if peak else ""
            print(f"| {label} | {kind}{size} | {t:.2f} | {o:.2f} | {o / t:.2f} | {extra} |")
EOF
