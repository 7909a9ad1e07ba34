// Falcon (FalconForCausalLM, modeling_falcon.py).
#include <string>

#include <fmt/format.h>

#include "testgen/family.h"

namespace og::testgen {
namespace {

// transformer.word_embeddings, transformer.h.N.{self_attention.query_key_value [(heads + 2 kv)
// head_dim, hidden], self_attention.dense, mlp.dense_h_to_4h, mlp.dense_4h_to_h (each biased iff
// `bias`), the block's LayerNorms with biases: ln_attn and ln_mlp (new_decoder_architecture with
// num_ln_in_parallel_attn 2), input_layernorm (parallel), or input_layernorm and
// post_attention_layernorm}, transformer.ln_f, lm_head unless tied. kv = num_kv_heads with the
// new architecture or without multi_query, else 1.
Result<std::vector<TensorSpec>> falcon_tensors(const Json& text, const FamilyContext& ctx) {
  const hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(const int64_t vocab, f.get_int("vocab_size"));
  OG_ASSIGN_OR_RETURN(const int64_t hidden, f.get_int("hidden_size"));
  OG_ASSIGN_OR_RETURN(const int64_t layers, f.get_int("num_hidden_layers"));
  OG_ASSIGN_OR_RETURN(const int64_t heads, f.get_int("num_attention_heads"));
  OG_ASSIGN_OR_RETURN(const bool new_arch, f.get_bool("new_decoder_architecture", false));
  OG_ASSIGN_OR_RETURN(const bool multi_query, f.get_bool("multi_query", true));
  OG_ASSIGN_OR_RETURN(const bool parallel, f.get_bool("parallel_attn", true));
  OG_ASSIGN_OR_RETURN(const int64_t n_ln, f.get_int("num_ln_in_parallel_attn", new_arch ? 2 : 1));
  OG_ASSIGN_OR_RETURN(const bool bias, f.get_bool("bias", false));
  OG_ASSIGN_OR_RETURN(const int64_t kv_config, f.get_int("num_kv_heads", heads));
  OG_ASSIGN_OR_RETURN(const int64_t inner, f.get_int("ffn_hidden_size", 4 * hidden));
  OG_ASSIGN_OR_RETURN(const bool tie, f.get_bool("tie_word_embeddings", ctx.tie_default));
  for (auto [key, v] : {std::pair{"vocab_size", vocab}, std::pair{"hidden_size", hidden}, std::pair{"num_hidden_layers", layers},
                        std::pair{"num_attention_heads", heads}, std::pair{"num_kv_heads", kv_config},
                        std::pair{"ffn_hidden_size", inner}})
    if (v <= 0) return f.invalid(key, "a positive integer");
  if (hidden % heads != 0) return f.invalid("hidden_size", "a multiple of num_attention_heads");
  const int64_t D = hidden / heads, kv = new_arch || !multi_query ? kv_config : 1;
  SpecList s;
  auto layer_norm = [&](const std::string& prefix) {
    s.norm(prefix, hidden, kUnitNormInit);
    s.add(prefix + ".bias", {hidden}, kBiasInit);
  };
  s.add("transformer.word_embeddings.weight", {vocab, hidden}, kEmbeddingInit);
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = fmt::format("transformer.h.{}.", i);
    if (new_arch && n_ln == 2) {
      layer_norm(p + "ln_attn");
      layer_norm(p + "ln_mlp");
    } else {
      layer_norm(p + "input_layernorm");
      if (!parallel) layer_norm(p + "post_attention_layernorm");
    }
    s.linear(p + "self_attention.query_key_value", (heads + 2 * kv) * D, hidden, bias, kQkGain);
    s.linear(p + "self_attention.dense", hidden, hidden, bias);
    s.linear(p + "mlp.dense_h_to_4h", inner, hidden, bias);
    s.linear(p + "mlp.dense_4h_to_h", hidden, inner, bias);
  }
  layer_norm("transformer.ln_f");
  if (!tie) s.add("lm_head.weight", {vocab, hidden}, linear_init(hidden, kHeadGain));
  return s.take();
}

// Falcon-7B's field set (multi_query, parallel_attn, no biases, exact gelu, tied) at hidden
// 64, 4 heads of 16.
Json falcon_config() {
  return {
      {"alibi", false},
      {"apply_residual_connection_post_layernorm", false},
      {"architectures", {"FalconForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bias", false},
      {"bos_token_id", 0},
      {"eos_token_id", 0},
      {"hidden_dropout", 0.0},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"layer_norm_epsilon", 1e-05},
      {"max_position_embeddings", 4096},
      {"model_type", "falcon"},
      {"multi_query", true},
      {"new_decoder_architecture", false},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"parallel_attn", true},
      {"torch_dtype", "bfloat16"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

// The usual intermediate_size override is FalconConfig's ffn_hidden_size.
Status falcon_derive(Json& text, const Json&, const FamilyContext&) {
  if (text.contains("intermediate_size")) {
    text["ffn_hidden_size"] = text["intermediate_size"];
    text.erase("intermediate_size");
  }
  return Status::ok();
}

}  // namespace

std::vector<FamilyDef> falcon_generators() {
  return {
      {"falcon", false, "torch_dtype", true, 0, 0, falcon_config, falcon_derive, falcon_tensors},
  };
}

}  // namespace og::testgen
