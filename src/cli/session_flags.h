// The flags of every command that runs a program (run, chat, serve, bench, logits), declared
// once so that each reads the same way everywhere: --kv-dtype, --threads/-t, --mmap. Python
// takes the same names (kv_dtype, threads, mmap).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "base/mapped_file.h"
#include "base/status.h"
#include "runtime/session.h"

namespace og::cli {

struct SessionFlags {
  std::string kv_dtype = "fp32";
  int threads = 0;      // 0: physical cores
  bool mmap = false;    // use the weights in place from the file's mapping
};

inline void add_session_flags(CLI::App* cmd, SessionFlags& f) {
  cmd->add_option("--kv-dtype", f.kv_dtype, "KV cache storage: fp32, bf16 or fp16")->capture_default_str();
  cmd->add_option("--threads,-t", f.threads, "worker threads (0: physical cores)")->capture_default_str();
  cmd->add_flag("--mmap", f.mmap,
                "use the weights in place from the file's mapping (zero-copy, shares the page cache) instead of "
                "reading them into huge pages");
}

// The KV dtype the flags name; a usage error for a bad name or a negative thread count.
inline Result<StorageType> check_session_flags(const SessionFlags& f) {
  if (f.threads < 0) return usage_error("--threads {} must be >= 0", f.threads);
  return runtime::parse_kv_dtype(f.kv_dtype);
}

inline Residency residency_of(const SessionFlags& f) { return residency_for_mmap(f.mmap); }

}  // namespace og::cli
