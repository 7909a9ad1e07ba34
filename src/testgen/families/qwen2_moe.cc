// Qwen2-MoE (Qwen2MoeForCausalLM, modeling_qwen2_moe.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Qwen2MoeAttention: q/k/v biased (qkv_bias, default true), o_proj never; the sparse layers'
// Qwen2MoeSparseMoeBlock with its shared expert (qwen_moe_tensors).
Result<std::vector<TensorSpec>> qwen2_moe_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(bool qkv_bias, hf::JsonFields(text, ctx.what).get_bool("qkv_bias", true));
  return qwen_moe_tensors(text, ctx, LlamaShape{.qkv_bias = qkv_bias}, /*shared_expert=*/true);
}

// Qwen1.5-MoE-A2.7B's field set (4 of 60 experts, not renormalized, a shared expert of
// intermediate_size's width) at 8 experts, with layer 1 kept dense (mlp_only_layers) so that
// both MLP kinds and the sparse-layer rule are exercised.
Json qwen2_moe_config() {
  return {
      {"architectures", {"Qwen2MoeForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"decoder_sparse_step", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"max_position_embeddings", 8192},
      {"max_window_layers", 21},
      {"mlp_only_layers", {1}},
      {"model_type", "qwen2_moe"},
      {"moe_intermediate_size", 32},
      {"norm_topk_prob", false},
      {"num_attention_heads", 4},
      {"num_experts", 8},
      {"num_experts_per_tok", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"output_router_logits", false},
      {"rms_norm_eps", 1e-6},
      {"rope_theta", 1000000.0},
      {"router_aux_loss_coef", 0.001},
      {"shared_expert_intermediate_size", 96},
      {"sliding_window", 8},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.39.0.dev0"},
      {"use_cache", true},
      {"use_sliding_window", false},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> qwen2_moe_generators() {
  return {
      {"qwen2_moe", false, "torch_dtype", false, 0, 16, qwen2_moe_config, nullptr, qwen2_moe_tensors},
  };
}

}  // namespace og::testgen
