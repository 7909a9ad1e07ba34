// The tensors of the families with multi-head latent attention (deepseek_v2, deepseek_v3,
// glm4_moe_lite), as their hub checkpoints name them.
#pragma once
#include <vector>

#include "testgen/family.h"

namespace og::testgen {

struct MlaTensors {
  Json defaults;                 // the config class's defaults for the keys read here (an object)
  bool choice_bias = true;       // the sigmoid router's mlp.gate.e_score_correction_bias
  bool mlp_layer_types = false;  // the dense layers from mlp_layer_types (default: layer 0); else first_k_dense_replace
};

Result<std::vector<TensorSpec>> mla_tensors(const Json& text, const FamilyContext& ctx, const MlaTensors& o);

}  // namespace og::testgen
