// The decoder Gemma, Gemma2 and Gemma3 share (gemma.cc), by version: 1, 2 or 3.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "hf/model_config.h"
#include "hf/safetensors.h"
#include "reference/reference.h"

namespace og::reference {

Result<std::vector<double>> gemma_forward(int version, const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                          std::span<const int32_t> tokens, const ForwardOptions& options);
Result<std::vector<int64_t>> gemma_windows(int version, const hf::ModelConfig& c);

// A family's Family::forward and Family::windows: the decoder of that version.
template <int kVersion>
Result<std::vector<double>> gemma_forward_of(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                             std::span<const int32_t> tokens, const ForwardOptions& options) {
  return gemma_forward(kVersion, c, ckpt, tokens, options);
}
template <int kVersion>
Result<std::vector<int64_t>> gemma_windows_of(const hf::ModelConfig& c) {
  return gemma_windows(kVersion, c);
}

}  // namespace og::reference
