// GPT-NeoX (GPTNeoXForCausalLM, modeling_gpt_neox.py).
#include <string>

#include <fmt/format.h>

#include "testgen/family.h"

namespace og::testgen {
namespace {

// gpt_neox.embed_in, gpt_neox.layers.N.{input_layernorm, post_attention_layernorm (LayerNorms
// with biases), attention.query_key_value [3H, H] (rows per head: q, k, v; biased iff
// attention_bias), attention.dense, mlp.dense_h_to_4h, mlp.dense_4h_to_h (biased)},
// gpt_neox.final_layer_norm, embed_out unless tied.
Result<std::vector<TensorSpec>> gpt_neox_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  OG_ASSIGN_OR_RETURN(bool bias, hf::JsonFields(text, ctx.what).get_bool("attention_bias", true));
  SpecList s;
  auto layer_norm = [&](const std::string& prefix) {
    s.norm(prefix, d.hidden, kUnitNormInit);
    s.add(prefix + ".bias", {d.hidden}, kBiasInit);
  };
  s.add("gpt_neox.embed_in.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("gpt_neox.layers.{}.", i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    layer_norm(p + "input_layernorm");
    layer_norm(p + "post_attention_layernorm");
    s.linear(p + "attention.query_key_value", 3 * d.heads * d.head_dim, d.hidden, bias, kQkGain);
    s.linear(p + "attention.dense", d.hidden, d.heads * d.head_dim, bias);
    s.linear(p + "mlp.dense_h_to_4h", inter, d.hidden, true);
    s.linear(p + "mlp.dense_4h_to_h", d.hidden, inter, true);
  }
  layer_norm("gpt_neox.final_layer_norm");
  if (!d.tie) s.add("embed_out.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

// Pythia's field set (EleutherAI/pythia-*: rotary_pct 0.25, rotary_emb_base 10000, the
// parallel block, exact gelu, untied) at hidden 64, 4 heads (no GQA in GPT-NeoX).
Json gpt_neox_config() {
  return {
      {"architectures", {"GPTNeoXForCausalLM"}},
      {"bos_token_id", 0},
      {"eos_token_id", 0},
      {"hidden_act", "gelu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 256},
      {"layer_norm_eps", 1e-05},
      {"max_position_embeddings", 4096},
      {"model_type", "gpt_neox"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"rotary_emb_base", 10000},
      {"rotary_pct", 0.25},
      {"tie_word_embeddings", false},
      {"torch_dtype", "float16"},
      {"transformers_version", "4.24.0"},
      {"use_cache", true},
      {"use_parallel_residual", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> gpt_neox_generators() {
  return {
      {"gpt_neox", false, "torch_dtype", false, 0, 0, gpt_neox_config, nullptr, gpt_neox_tensors},
  };
}

}  // namespace og::testgen
