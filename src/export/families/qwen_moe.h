// The sparse mixture-of-experts block Qwen2-MoE and Qwen3-MoE share (transformers'
// Qwen2MoeSparseMoeBlock, of which Qwen3MoeSparseMoeBlock is the one without a shared
// expert; OLMoE's OlmoeSparseMoeBlock is that one too, on every layer): on layer l when l is not in mlp_only_layers, num_experts > 0 and
// (l + 1) % decoder_sparse_step == 0, router logits = mlp.gate(x) [num_experts]; softmax over
// all experts, the num_experts_per_tok largest, renormalized to sum 1 when norm_topk_prob;
// experts mlp.experts.E.{gate,up,down}_proj with moe_intermediate_size, as the published
// checkpoints name them. Qwen2-MoE adds mlp.shared_expert.{gate,up,down}_proj
// (shared_expert_intermediate_size) on every token, scaled by sigmoid(mlp.shared_expert_gate(x)).
// The other layers keep the dense MLP of intermediate_size. router_aux_loss_coef and
// output_router_logits are training-only and ignored.
#pragma once

#include <cstdint>
#include <vector>

#include "export/decoder.h"

namespace og::exporter {

struct QwenMoeConfig {
  int64_t n_experts = 0, top_k = 0, intermediate = 0, sparse_step = 1;
  int64_t shared_intermediate = 0;  // 0: no shared expert (qwen3_moe)
  bool normalize = false;
  std::vector<int64_t> mlp_only_layers;
  bool sparse(int64_t layer) const;
};

// The block's fields, each checked and named when no model can have it.
Result<QwenMoeConfig> read_qwen_moe_config(const hf::ModelConfig& c, bool shared_expert);

// use_sliding_window true is refused: transformers versions disagree on which layers slide
// (max_window_layers in 4.5x, every layer or every other one since), and every published
// Qwen MoE config has it off.
Status refuse_qwen_moe_sliding(const hf::ModelConfig& c, const char* family);

// DecoderOptions::mlp for the block: kNoValue on the dense layers.
std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> qwen_moe_block(QwenMoeConfig moe, fb::Activation act);

}  // namespace og::exporter
