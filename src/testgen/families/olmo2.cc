// OLMo 2 (Olmo2ForCausalLM, modular_olmo2.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {

// Olmo2DecoderLayer: self_attn.{q,k,v,o}_proj (biases iff attention_bias), q_norm [Hq * D] and
// k_norm [Hkv * D] over the whole projections, mlp.{gate,up,down}_proj, and the two output
// norms post_attention_layernorm and post_feedforward_layernorm (no input_layernorm).
Result<std::vector<TensorSpec>> olmo_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  OG_ASSIGN_OR_RETURN(bool bias, flag(text, ctx, "attention_bias"));
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t q_out = d.heads * d.head_dim, kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    s.linear(p + "self_attn.q_proj", q_out, d.hidden, bias, kQkGain);
    s.linear(p + "self_attn.k_proj", kv_out, d.hidden, bias, kQkGain);
    s.linear(p + "self_attn.v_proj", kv_out, d.hidden, bias);
    s.linear(p + "self_attn.o_proj", d.hidden, q_out, bias);
    s.norm(p + "self_attn.q_norm", q_out, kUnitNormInit);
    s.norm(p + "self_attn.k_norm", kv_out, kUnitNormInit);
    s.norm(p + "post_attention_layernorm", d.hidden, kUnitNormInit);
    s.linear(p + "mlp.gate_proj", inter, d.hidden);
    s.linear(p + "mlp.up_proj", inter, d.hidden);
    s.linear(p + "mlp.down_proj", d.hidden, inter);
    s.norm(p + "post_feedforward_layernorm", d.hidden, kUnitNormInit);
  }
  s.norm("model.norm", d.hidden, kUnitNormInit);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

// OLMo-2-0425-1B's field set (untied head, rope_theta 500000, rms_norm_eps 1e-6) with grouped
// kv heads, so that GQA and the k norm's narrower width are exercised.
Json olmo2_config() {
  return {
      {"architectures", {"Olmo2ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"model_type", "olmo2"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 1},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling", nullptr},
      {"rope_theta", 500000},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.51.0"},
      {"use_cache", true},
      {"vocab_size", 352},
  };
}

std::vector<FamilyDef> olmo2_generators() {
  return {
      {"olmo2", false, "torch_dtype", false, 0, 0, olmo2_config, nullptr, olmo_tensors},
  };
}

}  // namespace og::testgen
