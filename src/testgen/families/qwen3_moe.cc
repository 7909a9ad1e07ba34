// Qwen3-MoE (Qwen3MoeForCausalLM, modeling_qwen3_moe.py).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {

// The sparse layers' router mlp.gate [num_experts, hidden] and experts
// mlp.experts.E.{gate,up,down}_proj of moe_intermediate_size, as the published checkpoints name
// them (transformers 5 fuses them in memory only), with Qwen2-MoE's shared expert
// mlp.shared_expert.{gate,up,down}_proj (shared_expert_intermediate_size) and its gate
// mlp.shared_expert_gate [1, hidden]; the dense layers keep mlp.{gate,up,down}_proj.
Result<std::vector<TensorSpec>> qwen_moe_tensors(const Json& text, const FamilyContext& ctx, const LlamaShape& shape,
                                                 bool shared_expert) {
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, shape));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  // transformers 5 saves num_experts as num_local_experts.
  OG_ASSIGN_OR_RETURN(int64_t experts, f.get_int(f.has("num_experts") ? "num_experts" : "num_local_experts"));
  OG_ASSIGN_OR_RETURN(int64_t inter, f.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(int64_t step, f.get_int("decoder_sparse_step", 1));
  int64_t shared = 0;
  if (shared_expert) { OG_ASSIGN_OR_RETURN(shared, f.get_int("shared_expert_intermediate_size")); }
  std::vector<int64_t> dense_layers;
  if (f.has("mlp_only_layers")) { OG_ASSIGN_OR_RETURN(dense_layers, f.get_int_list("mlp_only_layers")); }
  if (step < 1) return f.invalid("decoder_sparse_step", "positive");
  const auto sparse = [&](int64_t layer) {
    return experts > 0 && (layer + 1) % step == 0 && std::find(dense_layers.begin(), dense_layers.end(), layer) == dense_layers.end();
  };
  return replace_mlps(std::move(dense), sparse, [&](int64_t layer, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.mlp.", layer);
    s.linear(p + "gate", experts, d.hidden);
    for (int64_t e = 0; e < experts; ++e) {
      s.linear(fmt::format("{}experts.{}.gate_proj", p, e), inter, d.hidden);
      s.linear(fmt::format("{}experts.{}.up_proj", p, e), inter, d.hidden);
      s.linear(fmt::format("{}experts.{}.down_proj", p, e), d.hidden, inter);
    }
    if (shared_expert) {
      s.linear(p + "shared_expert.gate_proj", shared, d.hidden);
      s.linear(p + "shared_expert.up_proj", shared, d.hidden);
      s.linear(p + "shared_expert.down_proj", d.hidden, shared);
      s.linear(p + "shared_expert_gate", 1, d.hidden);
    }
  });
}

namespace {

// Qwen3MoeForCausalLM: Qwen3's attention; the MLP of layer i is Qwen3MoeSparseMoeBlock when i
// is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0 (num_experts > 0), else
// Qwen3MoeMLP (qwen_moe_tensors).
Result<std::vector<TensorSpec>> qwen3_moe_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape{.qk_norm = true};
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  return qwen_moe_tensors(text, ctx, shape, /*shared_expert=*/false);
}

// Qwen3-30B-A3B's field set (head_dim 32 against hidden_size / heads = 16) at 8 experts of
// which 2 per token, with norm_topk_prob, and layer 1 kept dense (mlp_only_layers) so that
// both MLP kinds and the sparse-layer rule are exercised.
Json qwen3_moe_config() {
  Json c = qwen3_config();  // Qwen3MoeConfig extends Qwen3's fields
  c.update({
      {"architectures", {"Qwen3MoeForCausalLM"}},
      {"decoder_sparse_step", 1},
      {"mlp_only_layers", {1}},
      {"model_type", "qwen3_moe"},
      {"moe_intermediate_size", 64},
      {"norm_topk_prob", true},
      {"num_experts", 8},
      {"num_experts_per_tok", 2},
      {"output_router_logits", false},
      {"router_aux_loss_coef", 0.001},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.51.0"},
      {"vocab_size", 320},
  });
  return c;
}

}  // namespace

std::vector<FamilyDef> qwen3_moe_generators() {
  return {
      {"qwen3_moe", false, "torch_dtype", false, 0, 4, qwen3_moe_config, nullptr, qwen3_moe_tensors},
  };
}

}  // namespace og::testgen
