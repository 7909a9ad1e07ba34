// Llama-shaped families: llama, smollm (llama model_type), mistral, qwen2, qwen3, phi3, smollm3,
// qwen3_moe, gpt_oss.
// Tensor names follow transformers' modeling_llama.py / modeling_mistral.py /
// modeling_qwen2.py / modeling_qwen3.py / modeling_phi3.py / modeling_smollm3.py (LlamaForCausalLM layout:
// model.embed_tokens, model.layers.N.{self_attn,mlp,input_layernorm,post_attention_layernorm},
// model.norm, lm_head unless tied).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "testgen/family.h"

namespace og::testgen {
namespace {

struct LlamaShape {
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;  // Qwen3: self_attn.q_norm / k_norm over head_dim, x * w
  bool fused = false;    // Phi-3: self_attn.qkv_proj and mlp.gate_up_proj
};

Result<std::vector<TensorSpec>> llama_shaped_tensors(const Json& text, const FamilyContext& ctx,
                                                      const LlamaShape& shape) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  SpecList s;
  s.add("model.embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  const int64_t q_out = d.heads * d.head_dim;   // [Hq * D]
  const int64_t kv_out = d.kv_heads * d.head_dim;
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    if (shape.fused) {
      s.linear(p + "self_attn.o_proj", d.hidden, q_out);
      s.linear(p + "self_attn.qkv_proj", q_out + 2 * kv_out, d.hidden, false, kQkGain);  // rows: q, then k, then v
      s.linear(p + "mlp.gate_up_proj", 2 * inter, d.hidden);             // rows: gate, then up
      s.linear(p + "mlp.down_proj", d.hidden, inter);
    } else {
      s.linear(p + "self_attn.q_proj", q_out, d.hidden, shape.qkv_bias, kQkGain);
      s.linear(p + "self_attn.k_proj", kv_out, d.hidden, shape.qkv_bias, kQkGain);
      s.linear(p + "self_attn.v_proj", kv_out, d.hidden, shape.qkv_bias);
      s.linear(p + "self_attn.o_proj", d.hidden, q_out, shape.o_bias);
      if (shape.qk_norm) {
        s.norm(p + "self_attn.q_norm", d.head_dim, kUnitNormInit);
        s.norm(p + "self_attn.k_norm", d.head_dim, kUnitNormInit);
      }
      s.linear(p + "mlp.gate_proj", inter, d.hidden, shape.mlp_bias);
      s.linear(p + "mlp.up_proj", inter, d.hidden, shape.mlp_bias);
      s.linear(p + "mlp.down_proj", d.hidden, inter, shape.mlp_bias);
    }
    s.norm(p + "input_layernorm", d.hidden, kUnitNormInit);
    s.norm(p + "post_attention_layernorm", d.hidden, kUnitNormInit);
  }
  s.norm("model.norm", d.hidden, kUnitNormInit);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

Result<bool> flag(const Json& text, const FamilyContext& ctx, const char* key) {
  return hf::JsonFields(text, ctx.what).get_bool(key, false);
}

// LlamaAttention: bias=config.attention_bias on q/k/v/o; LlamaMLP: bias=config.mlp_bias.
Result<std::vector<TensorSpec>> llama_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(shape.mlp_bias, flag(text, ctx, "mlp_bias"));
  return llama_shaped_tensors(text, ctx, shape);
}

// MistralAttention and MistralMLP have no biases.
Result<std::vector<TensorSpec>> mistral_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_shaped_tensors(text, ctx, LlamaShape{});
}

// Qwen2Attention: q/k/v always carry a bias, o_proj never.
Result<std::vector<TensorSpec>> qwen2_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_shaped_tensors(text, ctx, LlamaShape{.qkv_bias = true});
}

// Qwen3Attention: bias=config.attention_bias on q/k/v/o, plus q_norm/k_norm.
Result<std::vector<TensorSpec>> qwen3_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape{.qk_norm = true};
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  return llama_shaped_tensors(text, ctx, shape);
}

// Qwen3MoeForCausalLM: Qwen3's attention; the MLP of layer i is Qwen3MoeSparseMoeBlock when i
// is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0 (num_experts > 0): the
// router mlp.gate [num_experts, hidden] and experts mlp.experts.E.{gate,up,down}_proj of
// moe_intermediate_size, as the published checkpoints name them (transformers v5 fuses them
// in memory only); else Qwen3MoeMLP (mlp.{gate,up,down}_proj of intermediate_size).
Result<std::vector<TensorSpec>> qwen3_moe_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape{.qk_norm = true};
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> dense, llama_shaped_tensors(text, ctx, shape));
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  hf::JsonFields f(text, ctx.what);
  // transformers 5 saves num_experts as num_local_experts.
  OG_ASSIGN_OR_RETURN(int64_t experts, f.get_int(f.has("num_experts") ? "num_experts" : "num_local_experts"));
  OG_ASSIGN_OR_RETURN(int64_t inter, f.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(int64_t step, f.get_int("decoder_sparse_step", 1));
  std::vector<int64_t> dense_layers;
  if (f.has("mlp_only_layers")) { OG_ASSIGN_OR_RETURN(dense_layers, f.get_int_list("mlp_only_layers")); }
  if (step < 1) return f.invalid("decoder_sparse_step", "positive");
  std::vector<TensorSpec> out;
  for (TensorSpec& t : dense) {
    int64_t layer = -1;
    if (std::sscanf(t.name.c_str(), "model.layers.%ld.mlp.", &layer) == 1 && t.name.find(".mlp.") != std::string::npos &&
        experts > 0 && (layer + 1) % step == 0 &&
        std::find(dense_layers.begin(), dense_layers.end(), layer) == dense_layers.end()) {
      if (t.name.ends_with("mlp.gate_proj.weight")) {  // the sparse block replaces the MLP here
        const std::string p = fmt::format("model.layers.{}.mlp.", layer);
        SpecList s;
        s.linear(p + "gate", experts, d.hidden);
        for (int64_t e = 0; e < experts; ++e) {
          s.linear(fmt::format("{}experts.{}.gate_proj", p, e), inter, d.hidden);
          s.linear(fmt::format("{}experts.{}.up_proj", p, e), inter, d.hidden);
          s.linear(fmt::format("{}experts.{}.down_proj", p, e), d.hidden, inter);
        }
        for (TensorSpec& m : s.take()) out.push_back(std::move(m));
      }
      continue;
    }
    out.push_back(std::move(t));
  }
  return out;
}

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

Result<std::vector<TensorSpec>> phi3_tensors(const Json& text, const FamilyContext& ctx) {
  return llama_shaped_tensors(text, ctx, LlamaShape{.fused = true});
}

// Llama-3.2-1B's field set. The llama3 rope scaling uses original_max_position_embeddings
// 512 so that, with head_dim 16 and theta 5e5, rotary frequencies fall in all three bands
// (kept, smoothed, divided by factor).
Json llama_config() {
  return {
      {"architectures", {"LlamaForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", {2, 3}},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"mlp_bias", false},
      {"model_type", "llama"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pretraining_tp", 1},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling",
       {{"factor", 8.0},
        {"high_freq_factor", 4.0},
        {"low_freq_factor", 1.0},
        {"original_max_position_embeddings", 512},
        {"rope_type", "llama3"}}},
      {"rope_theta", 500000.0},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

// SmolLM2's field set: llama model_type, tied, no rope scaling, no head_dim field
// (head_dim = hidden_size / heads = 32), multi-query attention.
Json smollm_config() {
  return {
      {"architectures", {"LlamaForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 96},
      {"initializer_range", 0.041666666666666664},
      {"intermediate_size", 256},
      {"max_position_embeddings", 4096},
      {"mlp_bias", false},
      {"model_type", "llama"},
      {"num_attention_heads", 3},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 1},
      {"pretraining_tp", 1},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 100000.0},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 288},
  };
}

// Mistral-7B-v0.1's field set (sliding window on every layer), window 6.
Json mistral_config() {
  return {
      {"architectures", {"MistralForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"head_dim", 16},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 4096},
      {"model_type", "mistral"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-5},
      {"rope_theta", 10000.0},
      {"sliding_window", 6},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 352},
  };
}

// Qwen2.5's field set with use_sliding_window on: layers >= max_window_layers (2, 3, 4)
// use a window of 5, layers 0 and 1 full attention.
Json qwen2_config() {
  return {
      {"architectures", {"Qwen2ForCausalLM"}},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 4096},
      {"max_window_layers", 2},
      {"model_type", "qwen2"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 5},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-6},
      {"rope_theta", 1000000.0},
      {"sliding_window", 5},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"use_sliding_window", true},
      {"vocab_size", 320},
  };
}

// Qwen3-0.6B's field set: head_dim 32 differs from hidden_size / heads (16), tied.
Json qwen3_config() {
  return {
      {"architectures", {"Qwen3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"head_dim", 32},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"max_window_layers", 4},
      {"model_type", "qwen3"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling", nullptr},
      {"rope_theta", 1000000.0},
      {"sliding_window", nullptr},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"use_sliding_window", false},
      {"vocab_size", 384},
  };
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

// Phi-3-mini's field set (sliding window on every layer, here 7) with GQA and Phi-4-mini's
// partial_rotary_factor 0.75 (12 of 16 head dims rotated).
Json phi3_config() {
  return {
      {"architectures", {"Phi3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"embd_pdrop", 0.0},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"model_type", "phi3"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"original_max_position_embeddings", 4096},
      {"pad_token_id", 3},
      {"partial_rotary_factor", 0.75},
      {"resid_pdrop", 0.0},
      {"rms_norm_eps", 1e-5},
      {"rope_scaling", nullptr},
      {"rope_theta", 10000.0},
      {"sliding_window", 7},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.57.1"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

// HuggingFaceTB/SmolLM3-3B's field set (tests/data/configs/SmolLM3-3B.json): explicit
// layer_types and no_rope_layers (a NoPE layer every 4th), no head_dim (hidden / heads = 16),
// GQA, tied, rope_theta 5e6, no sliding window; 5 layers so that a RoPE layer follows the NoPE one.
Json smollm3_config() {
  return {
      {"architectures", {"SmolLM3ForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"layer_types", {"full_attention", "full_attention", "full_attention", "full_attention", "full_attention"}},
      {"max_position_embeddings", 4096},
      {"max_window_layers", 28},
      {"mlp_bias", false},
      {"model_type", "smollm3"},
      {"no_rope_layer_interval", 4},
      {"no_rope_layers", {1, 1, 1, 0, 1}},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 5},
      {"num_key_value_heads", 2},
      {"pad_token_id", 3},
      {"pretraining_tp", 2},
      {"rms_norm_eps", 1e-6},
      {"rope_scaling", nullptr},
      {"rope_theta", 5000000.0},
      {"sliding_window", nullptr},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.54.0.dev0"},
      {"use_cache", false},
      {"use_sliding_window", false},
      {"vocab_size", 320},
  };
}

// SmolLM3Config's derivations, redone after overrides unless they set the field: no_rope_layers
// (1 = RoPE) as int((l + 1) % no_rope_layer_interval != 0), then layer_types: sliding iff
// use_sliding_window, sliding_window set and layer l is NoPE.
Status smollm3_derive(Json& text, const Json& overrides, const FamilyContext& ctx) {
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(int64_t layers, f.get_int("num_hidden_layers"));
  OG_ASSIGN_OR_RETURN(int64_t interval, f.get_int("no_rope_layer_interval", 4));
  if (interval <= 0) return f.invalid("no_rope_layer_interval", "a positive integer");
  Json derived = Json::array();
  for (int64_t l = 0; l < layers; ++l) derived.push_back((l + 1) % interval != 0 ? 1 : 0);
  if (!overrides.contains("no_rope_layers")) text["no_rope_layers"] = derived;
  if (overrides.contains("layer_types")) return Status::ok();
  const Json& rope = f.has("no_rope_layers") ? text["no_rope_layers"] : derived;
  if (!rope.is_array() || static_cast<int64_t>(rope.size()) < layers) return f.invalid("no_rope_layers", "a list per layer");
  OG_ASSIGN_OR_RETURN(bool use, f.get_bool("use_sliding_window", false));
  Json types = Json::array();
  for (int64_t l = 0; l < layers; ++l)
    types.push_back(use && f.has("sliding_window") && rope[static_cast<size_t>(l)] == 0 ? "sliding_attention"
                                                                                          : "full_attention");
  text["layer_types"] = types;
  return Status::ok();
}

}  // namespace

const std::vector<FamilyDef>& llama_like_families() {
  static const std::vector<FamilyDef> defs = {
      {"llama", false, "torch_dtype", false, 0, 0, llama_config, nullptr, llama_tensors},
      {"smollm", false, "torch_dtype", false, 0, 0, smollm_config, nullptr, llama_tensors},
      {"mistral", false, "torch_dtype", false, 0, 8, mistral_config, nullptr, mistral_tensors},
      {"qwen2", false, "torch_dtype", false, 0, 32, qwen2_config, nullptr, qwen2_tensors},
      {"qwen3", false, "torch_dtype", false, 128, 32, qwen3_config, nullptr, qwen3_tensors},
      {"phi3", false, "torch_dtype", false, 0, 0, phi3_config, nullptr, phi3_tensors},
      // SmolLM3Attention/MLP: Llama's biases (attention_bias, mlp_bias); SmolLM3Config: 4 kv heads, tied.
      {"smollm3", false, "torch_dtype", true, 0, 4, smollm3_config, smollm3_derive, llama_tensors},
      {"qwen3_moe", false, "torch_dtype", false, 0, 4, qwen3_moe_config, nullptr, qwen3_moe_tensors},
      {"gpt_oss", false, "torch_dtype", false, 64, 8, gpt_oss_config, gpt_oss_derive, gpt_oss_tensors},
  };
  return defs;
}

}  // namespace og::testgen
