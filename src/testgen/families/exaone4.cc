// EXAONE 4.0 (Exaone4ForCausalLM, modular_exaone4.py).
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Exaone4DecoderLayer (Olmo2DecoderLayer's shape): self_attn.{q,k,v,o}_proj without biases,
// q_norm / k_norm [head_dim], mlp.{gate,up,down}_proj, and the two output norms
// post_attention_layernorm and post_feedforward_layernorm (no input_layernorm).
Result<std::vector<TensorSpec>> exaone4_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t q_out = d.heads * d.head_dim, kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    s.linear(p + "self_attn.q_proj", q_out, d.hidden, false, kQkGain);
    s.linear(p + "self_attn.k_proj", kv_out, d.hidden, false, kQkGain);
    s.linear(p + "self_attn.v_proj", kv_out, d.hidden);
    s.linear(p + "self_attn.o_proj", d.hidden, q_out);
    s.norm(p + "self_attn.q_norm", d.head_dim, kUnitNormInit);
    s.norm(p + "self_attn.k_norm", d.head_dim, kUnitNormInit);
    s.norm(p + "post_attention_layernorm", d.hidden, kUnitNormInit);
    s.gated_mlp(p + "mlp.", d.intermediate[static_cast<size_t>(i)], d.hidden);
    s.norm(p + "post_feedforward_layernorm", d.hidden, kUnitNormInit);
  }
  s.norm("model.norm", d.hidden, kUnitNormInit);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

// EXAONE-4.0-1.2B's field set (tests/data/configs/EXAONE-4.0-1.2B.json: every layer full and
// rotated (sliding_window null, layer_types given), llama3 rope scaling, head_dim 64 against
// 2048 / 32, tied) with head_dim 32 against 64 / 4.
Json exaone4_config() {
  return {
      {"architectures", {"Exaone4ForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 3},
      {"head_dim", 32},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"layer_types", {"full_attention", "full_attention", "full_attention", "full_attention"}},
      {"max_position_embeddings", 65536},
      {"model_type", "exaone4"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"rms_norm_eps", 1e-05},
      {"rope_scaling",
       {{"factor", 16.0}, {"high_freq_factor", 4.0}, {"low_freq_factor", 1.0},
        {"original_max_position_embeddings", 8192}, {"rope_type", "llama3"}}},
      {"rope_theta", 1000000.0},
      {"sliding_window", nullptr},
      {"sliding_window_pattern", nullptr},
      {"tie_word_embeddings", true},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

// EXAONE-4.0-32B's hybrid attention: a sliding_window (6 here, 4096 there) and
// sliding_window_pattern 4 without layer_types, so layers 0-2 slide with the rope and layer 3
// is full without it (NoPE); untied.
Json exaone4_hybrid_config() {
  Json c = exaone4_config();
  c.erase("layer_types");
  c["sliding_window"] = 6;
  c["sliding_window_pattern"] = 4;
  c["tie_word_embeddings"] = false;
  c["rope_scaling"] = nullptr;
  return c;
}

}  // namespace

std::vector<FamilyDef> exaone4_generators() {
  return {
      {"exaone4", false, "torch_dtype", false, 0, 32, exaone4_config, nullptr, exaone4_tensors},
      {"exaone4_hybrid", false, "torch_dtype", false, 0, 32, exaone4_hybrid_config, nullptr, exaone4_tensors},
  };
}

}  // namespace og::testgen
