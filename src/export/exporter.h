// HF checkpoint -> program file (DESIGN.md §1, §3).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"

namespace og::exporter {

// Progress of the weight writing, reported after each tensor written.
struct ExportProgress {
  int64_t tensors_written = 0;
  int64_t tensors_expected = 0;  // the checkpoint's tensor count (an estimate of the total)
  uint64_t bytes_written = 0;
};

struct ExportOptions {
  std::string model;               // directory, config.json, or hub id in the local HF cache
  std::string output;              // program file to write
  std::string dtype = "fp32";      // fp32 | bf16 | fp16: weights of linears and embeddings
  int64_t max_ctx_len = 0;         // 0: min(max_position_embeddings, 4096)
  int64_t prefill_chunk_size = 0;  // 0: min(512, max_ctx_len)
  std::string qlinear;              // "" | 4w | 8w: linear weights
  std::string qhead;                // "" | 4w | 8w: the LM head ("": 8w when qlinear is set, else none)
  std::string qembedding;           // "" | 4w | 8w: embedding tables
  int32_t qgroup_size = 32;         // 32 | 64 | 128
  std::string qactivations = "int8";  // int8 | bf16 | f32: how quantized (bf16: and bf16) linears meet their input
  std::string layout = "interleaved";  // interleaved | row-major: how matrices are stored (row_block 16 or 0)
  bool qround_to_nearest = false;   // llama.cpp's Q8_0/Q4_0 rounding instead of the fit (to compare)
  std::string tool_call_format;     // "": read from the chat template; else toolcall::parse_tool_call_format's argument
  bool show_progress = false;       // a progress line on stderr (when it is a terminal)
  std::function<void(const ExportProgress&)> on_progress;  // called on the exporting thread
};

struct ExportSummary {
  int64_t n_tensors = 0;
  uint64_t bytes = 0;
  int32_t n_ops = 0;
  double seconds = 0;
  int64_t n_quantized = 0;          // matrices stored 4w / 8w
  int64_t n_not_quantizable = 0;    // left in the program dtype: columns not a multiple of the group
  std::string tool_calls;           // the stored tool-call format and how it was found ("" without a template)
};

Result<ExportSummary> export_program(const ExportOptions& options);

}  // namespace og::exporter
