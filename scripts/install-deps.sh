#!/usr/bin/env bash
# Installs offgraph's build and test dependencies from Debian 12's packages.
set -euo pipefail
PKGS=(cmake ninja-build g++ pkg-config
      libhwy-dev flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev libcli11-dev libfmt-dev
      libxxhash-dev libpcre2-dev libgtest-dev libgmock-dev libbenchmark-dev
      python3-numpy)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "dependencies: ok"
