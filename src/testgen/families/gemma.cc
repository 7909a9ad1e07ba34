// The Gemma generators' shared tensor list, and Gemma 1 (GemmaForCausalLM, modeling_gemma.py),
// whose family file this is.
#include "testgen/families/gemma.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace og::testgen {

Result<std::vector<TensorSpec>> gemma_tensors(const Json& text, const FamilyContext& ctx, const GemmaShape& shape) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  OG_ASSIGN_OR_RETURN(bool bias, hf::JsonFields(text, ctx.what).get_bool("attention_bias", false));
  SpecList s;
  const std::string& m = shape.prefix;
  s.add(m + "embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t q_out = d.heads * d.head_dim;  // [Hq * D]
  const int64_t kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("{}layers.{}.", m, i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    s.linear(p + "self_attn.q_proj", q_out, d.hidden, bias, kQkGain);
    s.linear(p + "self_attn.k_proj", kv_out, d.hidden, bias, kQkGain);
    s.linear(p + "self_attn.v_proj", kv_out, d.hidden, bias);
    s.linear(p + "self_attn.o_proj", d.hidden, q_out, bias);
    if (shape.qk_norm) {
      s.norm(p + "self_attn.q_norm", d.head_dim, kZeroNormInit);
      s.norm(p + "self_attn.k_norm", d.head_dim, kZeroNormInit);
    }
    s.linear(p + "mlp.gate_proj", inter, d.hidden);
    s.linear(p + "mlp.up_proj", inter, d.hidden);
    s.linear(p + "mlp.down_proj", d.hidden, inter);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      if (shape.sandwich || std::string(n).find("feedforward") == std::string::npos) s.norm(p + n, d.hidden, kZeroNormInit);
  }
  s.norm(m + "norm", d.hidden, kZeroNormInit);
  if (!d.tie) s.add(shape.head_name, {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

namespace {

Result<std::vector<TensorSpec>> gemma1_tensors(const Json& text, const FamilyContext& ctx) {
  return gemma_tensors(text, ctx, GemmaShape{.sandwich = false});
}

// gemma-2b's field set as first published (multi-query attention, head_dim above
// hidden_size / heads, and hidden_act "gelu" without hidden_activation, which transformers
// reads as gelu_pytorch_tanh), at head_dim 32.
Json gemma_config() {
  return {
      {"architectures", {"GemmaForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 2},
      {"eos_token_id", 1},
      {"head_dim", 32},
      {"hidden_act", "gelu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 8192},
      {"model_type", "gemma"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 1},
      {"pad_token_id", 0},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000.0},
      {"transformers_version", "4.38.0.dev0"},
      {"use_cache", true},
      {"vocab_size", 384},
  };
}

}  // namespace

std::vector<FamilyDef> gemma_generators() {
  return {
      {"gemma", false, "torch_dtype", true, 256, 16, gemma_config, nullptr, gemma1_tensors},
  };
}

}  // namespace og::testgen
