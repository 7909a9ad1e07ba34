// OLMoE (OlmoeForCausalLM, modeling_olmoe.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// OlmoeDecoderLayer: self_attn.{q,k,v,o}_proj (biases iff attention_bias), q_norm [Hq * D] and
// k_norm [Hkv * D] over the whole projections, input_layernorm and post_attention_layernorm,
// and on every layer OlmoeSparseMoeBlock: router mlp.gate [num_experts, hidden] and experts
// mlp.experts.E.{gate,up,down}_proj of intermediate_size, one tensor each as the published
// checkpoints store them.
Result<std::vector<TensorSpec>> olmoe_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape{.qk_norm = true, .qk_norm_whole = true};
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, shape));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(int64_t experts, f.get_int(f.has("num_experts") ? "num_experts" : "num_local_experts"));
  if (experts < 1) return f.invalid("num_experts", "positive");
  return replace_mlps(std::move(dense), [](int64_t) { return true; }, [&](int64_t layer, SpecList& s) {
    const std::string p = fmt::format("model.layers.{}.mlp.", layer);
    const int64_t inter = d.intermediate[static_cast<size_t>(layer)];
    s.linear(p + "gate", experts, d.hidden);
    for (int64_t e = 0; e < experts; ++e) {
      s.linear(fmt::format("{}experts.{}.gate_proj", p, e), inter, d.hidden);
      s.linear(fmt::format("{}experts.{}.up_proj", p, e), inter, d.hidden);
      s.linear(fmt::format("{}experts.{}.down_proj", p, e), d.hidden, inter);
    }
  });
}

// OLMoE-1B-7B's field set (allenai/OLMoE-1B-7B-0125-Instruct: untied head, rms_norm_eps 1e-5,
// clip_qkv null, not renormalized) at 8 experts of which 2 per token, with grouped kv heads so
// that the k norm's narrower width is exercised (the 1B-7B model has as many as query heads).
Json olmoe_config() {
  return {
      {"architectures", {"OlmoeForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"clip_qkv", nullptr},
      {"eos_token_id", 300},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 32},
      {"max_position_embeddings", 4096},
      {"model_type", "olmoe"},
      {"norm_topk_prob", false},
      {"num_attention_heads", 4},
      {"num_experts", 8},
      {"num_experts_per_tok", 2},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"output_router_logits", false},
      {"pad_token_id", 1},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000.0},
      {"router_aux_loss_coef", 0.01},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.47.1"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> olmoe_generators() {
  return {
      {"olmoe", false, "torch_dtype", false, 0, 0, olmoe_config, nullptr, olmoe_tensors},
  };
}

}  // namespace og::testgen
