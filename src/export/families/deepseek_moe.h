// DeepSeek's mixture-of-experts blocks, on the layers from first_k_dense_replace on (the earlier
// ones keep the dense MLP; or by mlp_layer_types): DeepSeek-V2's softmax router (deepseek_v2.cc
// reads its fields into a DeepseekMoeConfig) and the sigmoid one DeepSeek-V3 introduced and
// GLM-4.5, GLM-4.7-Flash and dots.llm1 reuse (transformers' DeepseekV3MoE / Glm4MoeMoE with
// DeepseekV3TopkRouter):
//   router: r = mlp.gate(x) in f32 [n_routed_experts], s = sigmoid(r); the experts picked by
//   s + mlp.gate.e_score_correction_bias within the topk_group best of n_group groups (a
//   group scored by its two best; the others' keys masked to -inf, as transformers' routers
//   now do, where the first ones masked to 0), weights s of the picked, divided by their sum iff
//   norm_topk_prob, times routed_scaling_factor (the moe op's SigmoidTopK);
//   experts mlp.experts.E.{gate,up,down}_proj of moe_intermediate_size, one tensor each;
//   plus, on every token, mlp.shared_experts.{gate,up,down}_proj of
//   moe_intermediate_size * n_shared_experts (none when 0), ungated.
// Their checkpoints also hold num_nextn_predict_layers multi-token-prediction layers after the
// last (layers.L, ...), which transformers does not load.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "export/decoder.h"

namespace og::exporter {

// Which layers hold the mixture (the others the dense MLP): those from first_k_dense_replace
// on (DeepSeek-V2/V3, GLM-4.5), or mlp_layer_types' "sparse" ones, whose default is every
// layer but the first (GLM-4.7-Flash, where transformers ignores first_k_dense_replace).
enum class SparseLayers { kFromFirstKDenseReplace, kMlpLayerTypes };
Result<std::vector<bool>> read_sparse_layers(const hf::ModelConfig& c, SparseLayers rule);

struct DeepseekMoeConfig {
  int64_t n_experts = 0, top_k = 0, intermediate = 0, shared = 0, n_group = 1, topk_group = 1;
  std::vector<bool> sparse;  // [num_hidden_layers]: the layer holds the mixture
  bool normalize = true;
  double routed_scale = 1.0;
  // The router (the moe op's MoeAttrs): the sigmoid one by default; DeepSeek-V2's is
  // SoftmaxTopK without a choice bias, groups scored by their best, masked to 0.
  fb::RouterScoring scoring = fb::RouterScoring::SigmoidTopK;
  bool choice_bias = true;  // mlp.gate.e_score_correction_bias
  int32_t group_top = 2;
  float masked_key = -INFINITY;  // the router's masked_fill(~mask, -inf): only kept groups pick
};

// The sigmoid router's fields, each checked and named when no model can have it.
Result<DeepseekMoeConfig> read_sigmoid_moe_config(const hf::ModelConfig& c,
                                                 SparseLayers rule = SparseLayers::kFromFirstKDenseReplace);

// DecoderOptions::mlp for the block: kNoValue on the dense layers.
std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> deepseek_moe_block(DeepseekMoeConfig m, fb::Activation act);

// Marks the multi-token-prediction layers' tensors (layers.N.* for N in
// [L, L + num_nextn_predict_layers)) as read, so the export skips them.
Status skip_prediction_layers(BuildContext& ctx);

}  // namespace og::exporter
