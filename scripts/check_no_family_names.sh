#!/usr/bin/env bash
# Fails when a model family is named in a folder that must know none (docs/DESIGN.md §5:
# family names live only in src/export/families, src/reference, src/testgen and tests).
# Allowed anywhere: llama.cpp and its tools (llama-server, llama-bench, llama-cli), named as
# the tools we measure against, and "llama3", a transformers rope_type value.
# Usage: check_no_family_names.sh REPO_ROOT. Comments count too: a comment naming a family
# is how family-specific logic starts creeping into shared code.
set -euo pipefail
root="${1:?usage: check_no_family_names.sh REPO_ROOT}"
folders=()
for d in runtime kernels program generate base hf http serve python chat tokenizer cli constrain toolcall; do
  [[ -d "$root/src/$d" ]] && folders+=("$root/src/$d")
done
# export/'s top level too (its families/ folder is where the names live).
tops=("$root"/src/export/*.cc "$root"/src/export/*.h)
# A name at the start of a word (so gemma3_text, Gemma-3n and llama.cpp all count).
# ("cohere" followed by n is the English word; "phi" alone or with a version number.)
pattern='(^|[^[:alnum:]])(llama|gemma|qwen|mistral|mixtral|phi3|phi-?[1-4]|phi([^[:alnum:]]|$)|smollm|gpt[-_]?oss|granite|olmo|starcoder|stablelm|cohere([^n]|$)|command[- ]?r|aya[-_ ]|glm|ernie|neox|deepseek|minimax|hunyuan|apertus|nemotron|minitron|arcee|exaone|kimi|dots[-_.]?llm|dots1|seed[-_]?oss|moonlight)'
allowed='llama\.cpp|llama-(server|bench|cli)|llama3|<.?minimax:tool_call>'
if hits=$(grep -rniE "$pattern" "${folders[@]}" "${tops[@]}" | sed -E "s/$allowed//gI" | grep -iE "$pattern"); then
  echo "family names in family-free folders (reword, or move the code to src/export/families):"
  echo "$hits"
  exit 1
fi
echo "no family names in: ${folders[*]#$root/} and the top level of src/export"
