# Sourced by scripts/kv_error.sh and scripts/math_error.sh (after PROGRAM and a work directory
# are known): builds scripts/llamacpp_logits.cc against the anchors' libllama into
# $work/llamacpp_logits and writes N random token ids of PROGRAM's vocabulary (seeded) to
# $work/tokens.  Usage: llamacpp_logits_setup PROGRAM WORK N SEED
llamacpp_logits_setup() {
  local program=$1 work=$2 n=$3 seed=$4
  local llama=${LLAMA_CPP:-$(cd .. && pwd)/anchors/llama.cpp}
  g++ -O2 -std=c++17 scripts/llamacpp_logits.cc -I"$llama/include" -I"$llama/ggml/include" -L"$llama/build/bin" \
    -lllama -lggml -lggml-base -Wl,-rpath,"$llama/build/bin" -o "$work/llamacpp_logits"
  local vocab
  vocab=$("$offgraph" inspect --json "$program" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["vocab_size"])')
  /usr/bin/python3 -c "
import random
random.seed($seed)
print(','.join(str(random.randrange(16, $vocab)) for _ in range($n)))" >"$work/tokens"
}
