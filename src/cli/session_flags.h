// The flags of every command that runs a program (run, chat, serve, bench, logits), declared
// once so that each reads the same way everywhere: --kv-dtype, --threads/-t, --mmap, --math.
// Python takes the same names (kv_dtype, threads, mmap, math).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "base/mapped_file.h"
#include "base/status.h"
#include "runtime/math_mode.h"
#include "runtime/session.h"

namespace og::cli {

struct SessionFlags {
  std::string kv_dtype = "fp32";
  int threads = 0;      // 0: physical cores
  bool mmap = false;    // use the weights in place from the file's mapping
  std::string math = "auto";  // auto | exact | fast (runtime/math_mode.h)
};

inline void add_session_flags(CLI::App* cmd, SessionFlags& f) {
  cmd->add_option("--kv-dtype", f.kv_dtype, "KV cache storage: fp32, bf16, fp16, q8_0 or q4_0 (GGUF's blocks of 32, one fp16 scale each)")->capture_default_str();
  cmd->add_option("--threads,-t", f.threads, "worker threads (0: physical cores)")->capture_default_str();
  cmd->add_flag("--mmap", f.mmap,
                "use the weights in place from the file's mapping (zero-copy, shares the page cache) instead of "
                "reading them into huge pages");
  cmd->add_option("--math", f.math,
                  "how bf16 linears compute: fast (bf16 activations, BF16 dot products), exact (f32 activations), "
                  "or auto (fast where the CPU's BF16 dot products outrun its f32 FMAs, measured at load, else as exported)")
      ->capture_default_str();
}

// The KV dtype the flags name; a usage error for a bad name or a negative thread count.
inline Result<StorageType> check_session_flags(const SessionFlags& f) {
  if (f.threads < 0) return usage_error("--threads {} must be >= 0", f.threads);
  OG_TRY(runtime::parse_math_mode(f.math));
  return runtime::parse_kv_dtype(f.kv_dtype);
}

// The math mode the flags name (check_session_flags has refused a bad name).
inline runtime::MathMode math_of(const SessionFlags& f) {
  Result<runtime::MathMode> m = runtime::parse_math_mode(f.math);
  return m.is_ok() ? *m : runtime::MathMode::kExact;
}

inline Residency residency_of(const SessionFlags& f) { return residency_for_mmap(f.mmap); }

}  // namespace og::cli
