// Gemma 3n text (Gemma3nForConditionalGeneration's language model, modeling_gemma3n.py):
// altup (per layer, altup_projections / altup_unembed_projections), laurel, per-layer
// intermediate_size.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/gemma_n.h"

namespace og::testgen {
namespace {

Status gemma3n_derive(Json& text, const Json& overrides, const FamilyContext& ctx) {
  OG_TRY(derive_layer_fields(text, overrides, ctx, false));
  const int64_t layers = text["num_hidden_layers"].get<int64_t>();
  if (!overridden(overrides, "intermediate_size") && text["intermediate_size"].is_array()) {
    Json sizes = Json::array();
    for (int64_t i = 0; i < layers; ++i) sizes.push_back(i % 2 == 0 ? 128 : 96);
    text["intermediate_size"] = sizes;
  }
  if (!overridden(overrides, "activation_sparsity_pattern")) {
    Json pattern = Json::array();
    for (int64_t i = 0; i < layers; ++i) pattern.push_back(i < std::max<int64_t>(1, layers / 3) ? 0.95 : 0.0);
    text["activation_sparsity_pattern"] = pattern;
  }
  return Status::ok();
}

Result<std::vector<TensorSpec>> gemma3n_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  OG_ASSIGN_OR_RETURN(KvSharing kv, read_kv_sharing(text, ctx, d.layers));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(bool bias, f.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(int64_t per_layer, f.get_int("hidden_size_per_layer_input"));
  OG_ASSIGN_OR_RETURN(int64_t vocab_per_layer, f.get_int("vocab_size_per_layer_input", d.vocab));
  OG_ASSIGN_OR_RETURN(int64_t altup, f.get_int("altup_num_inputs"));
  OG_ASSIGN_OR_RETURN(int64_t laurel_rank, f.get_int("laurel_rank"));
  if (per_layer <= 0) return f.invalid("hidden_size_per_layer_input", "a positive integer");
  if (vocab_per_layer <= 0) return f.invalid("vocab_size_per_layer_input", "a positive integer");
  if (altup < 1) return f.invalid("altup_num_inputs", "at least 1");
  if (laurel_rank <= 0) return f.invalid("laurel_rank", "a positive integer");

  SpecList s;
  const std::string m = kTextPrefix;
  const int64_t q_out = d.heads * d.head_dim;  // [Hq * D]
  const int64_t kv_out = d.kv_heads * d.head_dim;
  s.add(m + "embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("{}layers.{}.", m, i);
    const int64_t inter = d.intermediate[static_cast<size_t>(i)];
    const bool has_kv = !kv.shared(i) || ctx.hub_layout;
    s.linear(p + "self_attn.q_proj", q_out, d.hidden, bias, kQkGain);
    if (has_kv) {
      s.linear(p + "self_attn.k_proj", kv_out, d.hidden, bias, kQkGain);
      s.linear(p + "self_attn.v_proj", kv_out, d.hidden, bias);
    }
    s.linear(p + "self_attn.o_proj", d.hidden, q_out, bias);
    s.norm(p + "self_attn.q_norm", d.head_dim, kUnitNormInit);
    if (has_kv) s.norm(p + "self_attn.k_norm", d.head_dim, kUnitNormInit);
    s.linear(p + "mlp.gate_proj", inter, d.hidden);
    s.linear(p + "mlp.up_proj", inter, d.hidden);
    s.linear(p + "mlp.down_proj", d.hidden, inter);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      s.norm(p + n, d.hidden, kUnitNormInit);
    // AltUp: coefficients stay small so the altup streams mix without blowing up; the router
    // is scaled by sqrt(hidden) because its input is divided by hidden.
    s.add(p + "altup.correct_output_scale", {d.hidden}, Init{0.5, 0.25});
    s.add(p + "altup.correction_coefs.weight", {altup, altup}, Init{0.0, 0.1});
    s.add(p + "altup.prediction_coefs.weight", {altup * altup, altup}, Init{0.0, 0.1});
    s.add(p + "altup.modality_router.weight", {altup, d.hidden}, Init{0.0, std::sqrt(static_cast<double>(d.hidden))});
    s.norm(p + "altup.router_norm", d.hidden, kUnitNormInit);
    s.linear(p + "laurel.linear_left", laurel_rank, d.hidden);
    s.linear(p + "laurel.linear_right", d.hidden, laurel_rank);
    s.norm(p + "laurel.post_laurel_norm", d.hidden, kUnitNormInit);
    per_layer_layer_tensors(s, p, per_layer, d.hidden);
  }
  s.norm(m + "norm", d.hidden, kUnitNormInit);
  per_layer_model_tensors(s, vocab_per_layer, d.layers, per_layer, d.hidden);
  for (int64_t i = 0; i + 1 < altup; ++i) s.linear(fmt::format("{}altup_projections.{}", m, i), d.hidden, d.hidden);
  for (int64_t i = 0; i + 1 < altup; ++i)
    s.linear(fmt::format("{}altup_unembed_projections.{}", m, i), d.hidden, d.hidden);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

// google/gemma-3n-E2B's layout, scaled down: 6 layers (full attention at 2 and 5), the last
// 2 kv-shared (layer 4 reads layer 3's cache, layer 5 reads layer 2's), 4 altup streams,
// per-layer inputs of 16, alternating intermediate sizes, activation sparsity on the first
// two layers. Token ids 256..319 belong to the vision (256..287) and audio (288..319) towers,
// beyond vocab_size_per_layer_input, as in the real model.
Json gemma3n_config() {
  Json text = {
      {"activation_sparsity_pattern", {0.95, 0.95, 0.0, 0.0, 0.0, 0.0}},
      {"altup_active_idx", 0},
      {"altup_coef_clip", 120.0},
      {"altup_correct_scale", true},
      {"altup_lr_multiplier", 1.0},
      {"altup_num_inputs", 4},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 2},
      {"eos_token_id", 1},
      {"final_logit_softcapping", 30.0},
      {"head_dim", 32},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"hidden_size", 64},
      {"hidden_size_per_layer_input", 16},
      {"initializer_range", 0.02},
      {"intermediate_size", {128, 96, 128, 96, 128, 96}},
      {"laurel_rank", 8},
      {"layer_types", periodic_layer_types(6, 3)},
      {"max_position_embeddings", 4096},
      {"model_type", "gemma3n_text"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 6},
      {"num_key_value_heads", 2},
      {"num_kv_shared_layers", 2},
      {"pad_token_id", 0},
      {"query_pre_attn_scalar", 32},
      {"rms_norm_eps", 1e-6},
      {"rope_local_base_freq", 10000.0},
      {"rope_scaling", nullptr},
      {"rope_theta", 1000000.0},
      {"sliding_window", 6},
      {"tie_word_embeddings", true},
      {"vocab_size", 320},
      {"vocab_size_per_layer_input", 256},
  };
  return {
      {"architectures", {"Gemma3nForConditionalGeneration"}},
      {"audio_config",
       {{"conf_num_hidden_layers", 1},
        {"hidden_size", 32},
        {"model_type", "gemma3n_audio"},
        {"vocab_offset", 288},
        {"vocab_size", 32}}},
      {"audio_soft_tokens_per_image", 4},
      {"audio_token_id", 289},
      {"boa_token_id", 255},
      {"boi_token_id", 254},
      {"eoa_token_id", 288},
      {"eoi_token_id", 256},
      {"eos_token_id", {1, 5}},
      {"image_token_id", 257},
      {"initializer_range", 0.02},
      {"model_type", "gemma3n"},
      {"text_config", text},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"vision_config",
       {{"architecture", "mobilenetv5_300m_enc"},
        {"hidden_size", 32},
        {"model_type", "gemma3n_vision"},
        {"rms_norm_eps", 1e-6},
        {"vocab_offset", 256},
        {"vocab_size", 32}}},
      {"vision_soft_tokens_per_image", 4},
  };
}

}  // namespace

std::vector<FamilyDef> gemma3n_generators() {
  return {
      {"gemma3n", true, "torch_dtype", true, 256, 2, gemma3n_config, gemma3n_derive, gemma3n_tensors},
  };
}

}  // namespace og::testgen
