// What the Gemma generators share: every RMSNorm computing x * (1 + w); four norms per layer
// (input, post_attention, pre_feedforward, post_feedforward) from Gemma 2 on, two (input,
// post_attention) in Gemma 1.
#pragma once

#include <string>
#include <vector>

#include "testgen/family.h"

namespace og::testgen {

struct GemmaShape {
  bool qk_norm = false;
  bool sandwich = true;                   // false: Gemma 1's two norms per layer
  std::string prefix = "model.";          // where embed_tokens, layers and norm live
  std::string head_name = "lm_head.weight";
};

Result<std::vector<TensorSpec>> gemma_tensors(const Json& text, const FamilyContext& ctx, const GemmaShape& shape);

}  // namespace og::testgen
