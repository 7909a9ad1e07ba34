// gpt-oss (GptOssForCausalLM, modular_gpt_oss.py, integrations/mxfp4.py).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// GptOssForCausalLM (modular_gpt_oss.py, integrations/mxfp4.py): Llama's attention with
// biases (attention_bias) and self_attn.sinks [heads]; every MLP is GptOssMLP: mlp.router
// (weight [E, H], bias [E]) and mlp.experts with biases gate_up_proj_bias [E, 2I] and
// down_proj_bias [E, H], and matrices as the hub stores them with quantization_config mxfp4
// (U8 gate_up_proj_blocks [E, 2I, H/32, 16] and _scales [E, 2I, H/32], down_proj_blocks
// [E, H, I/32, 16] and _scales [E, H, I/32]), else as transformers' float parameters
// gate_up_proj [E, H, 2I] and down_proj [E, I, H].
Result<std::vector<TensorSpec>> gpt_oss_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(int64_t E, f.get_int("num_local_experts"));
  const bool bias = true;  // GptOssConfig: attention_bias = True whatever the file says
  const bool mxfp4 = f.has("quantization_config");
  // Scale bytes around s0 = 127 + round(log2(1 / (2.93 sqrt(fan_in)))), 2.93 the rms of the
  // 16 e2m1 values: the weights then have about linear_init's spread.
  auto scales = [](int64_t fan_in) {
    const int s0 = 127 + static_cast<int>(std::lround(std::log2(1.0 / (2.93 * std::sqrt(static_cast<double>(fan_in))))));
    return ByteRange{s0 - 1, s0 + 1};
  };
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t H = d.hidden, q_out = d.heads * d.head_dim, kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    const int64_t I = d.intermediate[static_cast<size_t>(i)];
    if (mxfp4 && (H % 32 != 0 || I % 32 != 0)) return f.invalid("hidden_size", "with intermediate_size a multiple of 32");
    s.add(p + "self_attn.sinks", {d.heads}, Init{0.0, 1.0});
    s.linear(p + "self_attn.q_proj", q_out, H, bias, kQkGain);
    s.linear(p + "self_attn.k_proj", kv_out, H, bias, kQkGain);
    s.linear(p + "self_attn.v_proj", kv_out, H, bias);
    s.linear(p + "self_attn.o_proj", H, q_out, bias);
    s.linear(p + "mlp.router", E, H, true, 2.0);
    const std::string x = p + "mlp.experts.";
    if (mxfp4) {
      s.add_bytes(x + "gate_up_proj_blocks", {E, 2 * I, H / 32, 16}, {});
      s.add_bytes(x + "gate_up_proj_scales", {E, 2 * I, H / 32}, scales(H));
    } else {
      s.add(x + "gate_up_proj", {E, H, 2 * I}, linear_init(H));
    }
    s.add(x + "gate_up_proj_bias", {E, 2 * I}, kBiasInit);
    if (mxfp4) {
      s.add_bytes(x + "down_proj_blocks", {E, H, I / 32, 16}, {});
      s.add_bytes(x + "down_proj_scales", {E, H, I / 32}, scales(I));
    } else {
      s.add(x + "down_proj", {E, I, H}, linear_init(I));
    }
    s.add(x + "down_proj_bias", {E, H}, kBiasInit);
    s.norm(p + "input_layernorm", H, kUnitNormInit);
    s.norm(p + "post_attention_layernorm", H, kUnitNormInit);
  }
  s.norm("model.norm", H, kUnitNormInit);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, H}, linear_init(H, kHeadGain));
  return s.take();
}

// gpt-oss-20b's field set (tests/data/configs/gpt-oss-20b.json, with the hub's
// quantization_config) at 8 experts of which 2 per token, H = I = 64 (multiples of MXFP4's
// 32), alternating sliding (window 5) and full layers, and swiglu_limit 1.5 so that both
// clamps bind on many units (with 7.0 none of these random units would reach it).
// --set quantization_config=null writes the experts as float parameters instead.
Json gpt_oss_config() {
  return {
      {"architectures", {"GptOssForCausalLM"}},
      {"attention_bias", true},
      {"attention_dropout", 0.0},
      {"eos_token_id", 2},
      {"experts_per_token", 2},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initial_context_length", 4096},
      {"initializer_range", 0.02},
      {"intermediate_size", 64},
      {"layer_types", {"sliding_attention", "full_attention", "sliding_attention", "full_attention"}},
      {"max_position_embeddings", 131072},
      {"model_type", "gpt_oss"},
      {"num_attention_heads", 4},
      {"num_experts_per_tok", 2},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"num_local_experts", 8},
      {"output_router_logits", false},
      {"pad_token_id", 3},
      {"quantization_config",
       {{"modules_to_not_convert",
         {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"}},
        {"quant_method", "mxfp4"}}},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling",
       {{"beta_fast", 32.0}, {"beta_slow", 1.0}, {"factor", 32.0}, {"original_max_position_embeddings", 4096},
        {"rope_type", "yarn"}, {"truncate", false}}},
      {"rope_theta", 150000},
      {"router_aux_loss_coef", 0.9},
      {"sliding_window", 5},
      {"swiglu_limit", 1.5},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.55.0.dev0"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

// GptOssConfig's layer_types after num_hidden_layers changed: sliding on even layers.
Status gpt_oss_derive(Json& text, const Json& overrides, const FamilyContext& ctx) {
  if (overrides.contains("layer_types")) return Status::ok();
  OG_ASSIGN_OR_RETURN(int64_t layers, hf::JsonFields(text, ctx.what).get_int("num_hidden_layers"));
  Json types = Json::array();
  for (int64_t l = 0; l < layers; ++l) types.push_back((l + 1) % 2 != 0 ? "sliding_attention" : "full_attention");
  text["layer_types"] = types;
  return Status::ok();
}

}  // namespace

std::vector<FamilyDef> gpt_oss_generators() {
  return {
      {"gpt_oss", false, "torch_dtype", false, 64, 8, gpt_oss_config, gpt_oss_derive, gpt_oss_tensors},
  };
}

}  // namespace og::testgen
