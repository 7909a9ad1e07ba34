// What the Gemma 2 and Gemma 3 generators share: four norms per layer (input,
// post_attention, pre_feedforward, post_feedforward), every RMSNorm computing x * (1 + w).
#pragma once

#include <string>
#include <vector>

#include "testgen/family.h"

namespace og::testgen {

struct GemmaShape {
  bool qk_norm = false;
  std::string prefix = "model.";          // where embed_tokens, layers and norm live
  std::string head_name = "lm_head.weight";
};

Result<std::vector<TensorSpec>> gemma_tensors(const Json& text, const FamilyContext& ctx, const GemmaShape& shape);

}  // namespace og::testgen
