// Qwen2/Qwen3 share transformers' sliding-window rule: sliding_window counts only with
// use_sliding_window, and then applies to layers i >= max_window_layers.
#pragma once

#include "hf/model_config.h"

namespace og::exporter {

inline Result<int64_t> qwen_sliding_window(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(bool use, c.text_fields().get_bool("use_sliding_window", false));
  return use ? c.sliding_window.value_or(0) : 0;
}

inline Result<std::vector<std::string>> qwen_layer_types(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(int64_t window, qwen_sliding_window(c));
  OG_ASSIGN_OR_RETURN(int64_t max_window_layers, c.text_fields().get_int("max_window_layers", 28));
  std::vector<std::string> types;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    types.push_back(window > 0 && i >= max_window_layers ? "sliding_attention" : "full_attention");
  return types;
}

}  // namespace og::exporter
