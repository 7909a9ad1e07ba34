// Gemma 4 text (Gemma4ForConditionalGeneration's language model, modeling_gemma4.py):
// layer_scalar [1] per layer, full-attention layers at global_head_dim, double-wide MLPs on
// kv-shared layers when use_double_wide_mlp; with enable_moe_block every layer also has
// router.{proj.weight, scale, per_expert_scale}, the fused experts.gate_up_proj [E, 2I, H] /
// experts.down_proj [E, H, I] and the norms post_feedforward_layernorm_1,
// pre_feedforward_layernorm_2, post_feedforward_layernorm_2.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/gemma_n.h"

namespace og::testgen {
namespace {

Status gemma4_derive(Json& text, const Json& overrides, const FamilyContext& ctx) {
  return derive_layer_fields(text, overrides, ctx, true);
}

Result<std::vector<TensorSpec>> gemma4_tensors(const Json& text, const FamilyContext& ctx) {
  OG_ASSIGN_OR_RETURN(TextDims d, read_text_dims(text, ctx));
  OG_ASSIGN_OR_RETURN(KvSharing kv, read_kv_sharing(text, ctx, d.layers));
  hf::JsonFields f(text, ctx.what);
  OG_ASSIGN_OR_RETURN(bool bias, f.get_bool("attention_bias", false));
  OG_ASSIGN_OR_RETURN(bool moe, f.get_bool("enable_moe_block", false));
  int64_t n_experts = 0, moe_inter = 0;
  if (moe) {  // google/gemma-4-26B-A4B: a router and fused experts beside the dense MLP of every layer
    for (const char* key : {"num_experts", "top_k_experts", "moe_intermediate_size"})
      if (!text.contains(key) || !text.at(key).is_number_integer() || text.at(key).get<int64_t>() < 1)
        return f.invalid(key, "a positive integer (enable_moe_block is true)");
    n_experts = text.at("num_experts").get<int64_t>();
    moe_inter = text.at("moe_intermediate_size").get<int64_t>();
  }
  OG_ASSIGN_OR_RETURN(bool k_eq_v, f.get_bool("attention_k_eq_v", false));
  OG_ASSIGN_OR_RETURN(bool double_wide, f.get_bool("use_double_wide_mlp", false));
  OG_ASSIGN_OR_RETURN(int64_t global_head_dim, f.get_int("global_head_dim", 0));
  OG_ASSIGN_OR_RETURN(int64_t global_kv_heads, f.get_int("num_global_key_value_heads", d.kv_heads));
  OG_ASSIGN_OR_RETURN(int64_t per_layer, f.get_int("hidden_size_per_layer_input", 0));
  OG_ASSIGN_OR_RETURN(int64_t vocab_per_layer, f.get_int("vocab_size_per_layer_input", d.vocab));
  if (global_head_dim < 0) return f.invalid("global_head_dim", "a positive integer or null");
  if (global_kv_heads <= 0 || d.heads % global_kv_heads != 0)
    return f.invalid("num_global_key_value_heads", "a positive divisor of num_attention_heads");
  if (per_layer < 0) return f.invalid("hidden_size_per_layer_input", "a positive integer, 0 or null");
  if (vocab_per_layer <= 0) return f.invalid("vocab_size_per_layer_input", "a positive integer");

  SpecList s;
  const std::string m = kTextPrefix;
  s.add(m + "embed_tokens.weight", {d.vocab, d.hidden}, kEmbeddingInit);
  for (int64_t i = 0; i < d.layers; ++i) {
    const std::string p = fmt::format("{}layers.{}.", m, i);
    const bool full = kv.full(i);
    const int64_t head_dim = full && global_head_dim > 0 ? global_head_dim : d.head_dim;
    const bool k_is_v = k_eq_v && full;  // use_alternative_attention: no v_proj
    const int64_t kv_heads = k_is_v ? global_kv_heads : d.kv_heads;
    const int64_t inter = d.intermediate[static_cast<size_t>(i)] * (double_wide && kv.shared(i) ? 2 : 1);
    s.linear(p + "self_attn.q_proj", d.heads * head_dim, d.hidden, bias, kQkGain);
    s.norm(p + "self_attn.q_norm", head_dim, kUnitNormInit);
    if (!kv.shared(i)) {
      s.norm(p + "self_attn.k_norm", head_dim, kUnitNormInit);
      s.linear(p + "self_attn.k_proj", kv_heads * head_dim, d.hidden, bias, kQkGain);
      if (!k_is_v) s.linear(p + "self_attn.v_proj", kv_heads * head_dim, d.hidden, bias);
    }
    s.linear(p + "self_attn.o_proj", d.hidden, d.heads * head_dim, bias);
    s.linear(p + "mlp.gate_proj", inter, d.hidden);
    s.linear(p + "mlp.up_proj", inter, d.hidden);
    s.linear(p + "mlp.down_proj", d.hidden, inter);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      s.norm(p + n, d.hidden, kUnitNormInit);
    if (moe) {
      // Gemma4TextRouter: its input is rms-normed then scaled by H^-1/2, so the projection's
      // gain sqrt(H) gives logits of std ~1. scale and per_expert_scale are far enough from 1
      // that dropping either changes the logits.
      s.add(p + "router.proj.weight", {n_experts, d.hidden}, linear_init(d.hidden, std::sqrt(static_cast<double>(d.hidden))));
      s.add(p + "router.scale", {d.hidden}, Init{1.0, 0.3});
      s.add(p + "router.per_expert_scale", {n_experts}, Init{1.0, 0.3});
      // Gemma4TextExperts: fused, output-major; rows [0, I) of gate_up_proj[e] gate, [I, 2I) up.
      s.add(p + "experts.gate_up_proj", {n_experts, 2 * moe_inter, d.hidden}, linear_init(d.hidden));
      s.add(p + "experts.down_proj", {n_experts, d.hidden, moe_inter}, linear_init(moe_inter));
      for (const char* n : {"post_feedforward_layernorm_1", "pre_feedforward_layernorm_2", "post_feedforward_layernorm_2"})
        s.norm(p + n, d.hidden, kUnitNormInit);
    }
    s.add(p + "layer_scalar", {1}, Init{0.8, 0.2});  // a persistent buffer: it multiplies the residual stream
    if (per_layer > 0) per_layer_layer_tensors(s, p, per_layer, d.hidden);
  }
  s.norm(m + "norm", d.hidden, kUnitNormInit);
  if (per_layer > 0) per_layer_model_tensors(s, vocab_per_layer, d.layers, per_layer, d.hidden);
  if (!d.tie) s.add("lm_head.weight", {d.vocab, d.hidden}, linear_init(d.hidden, kHeadGain));
  return s.take();
}

// google/gemma-4-E2B-it's layout, scaled down: 6 layers (full attention at 2 and 5, the last
// layer full as transformers requires), sliding head_dim 32 and global_head_dim 64, the last 2
// layers kv-shared with double-wide MLPs, per-layer inputs of 16, window 8.
Json gemma4_config() {
  Json text = {
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attention_k_eq_v", false},
      {"bos_token_id", 2},
      {"dtype", "float32"},
      {"enable_moe_block", false},
      {"eos_token_id", 1},
      {"final_logit_softcapping", 30.0},
      {"global_head_dim", 64},
      {"head_dim", 32},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"hidden_size", 64},
      {"hidden_size_per_layer_input", 16},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"layer_types", periodic_layer_types(6, 3)},
      {"max_position_embeddings", 4096},
      {"model_type", "gemma4_text"},
      {"moe_intermediate_size", nullptr},
      {"num_attention_heads", 4},
      {"num_experts", nullptr},
      {"num_global_key_value_heads", nullptr},
      {"num_hidden_layers", 6},
      {"num_key_value_heads", 2},
      {"num_kv_shared_layers", 2},
      {"pad_token_id", 0},
      {"rms_norm_eps", 1e-6},
      {"rope_parameters",
       {{"full_attention", {{"partial_rotary_factor", 0.25}, {"rope_theta", 1000000.0}, {"rope_type", "proportional"}}},
        {"sliding_attention", {{"rope_theta", 10000.0}, {"rope_type", "default"}}}}},
      {"sliding_window", 8},
      {"tie_word_embeddings", true},
      {"top_k_experts", nullptr},
      {"use_bidirectional_attention", nullptr},
      {"use_cache", true},
      {"use_double_wide_mlp", true},
      {"vocab_size", 384},
      {"vocab_size_per_layer_input", 384},
  };
  return {
      {"architectures", {"Gemma4ForConditionalGeneration"}},
      {"audio_config",
       {{"attention_chunk_size", 12},
        {"attention_context_left", 13},
        {"attention_context_right", 0},
        {"attention_logit_cap", 50.0},
        {"conv_kernel_size", 5},
        {"gradient_clipping", 10000000000.0},
        {"hidden_size", 32},
        {"model_type", "gemma4_audio"},
        {"num_attention_heads", 2},
        {"num_hidden_layers", 1},
        {"output_proj_dims", 64},
        {"residual_weight", 0.5},
        {"rms_norm_eps", 1e-6},
        {"subsampling_conv_channels", {8, 4}},
        {"use_clipped_linears", true}}},
      {"audio_token_id", 379},
      {"boa_token_id", 375},
      {"boi_token_id", 374},
      {"eoa_token_id", 381},
      {"eoa_token_index", 381},
      {"eoi_token_id", 380},
      {"eos_token_id", {1, 5}},
      {"image_token_id", 378},
      {"initializer_range", 0.02},
      {"model_type", "gemma4"},
      {"text_config", text},
      {"tie_word_embeddings", true},
      {"video_token_id", 382},
      {"vision_config",
       {{"head_dim", 16},
        {"hidden_size", 32},
        {"intermediate_size", 64},
        {"model_type", "gemma4_vision"},
        {"num_attention_heads", 2},
        {"num_hidden_layers", 1},
        {"num_key_value_heads", 2},
        {"patch_size", 8},
        {"pooling_kernel_size", 3},
        {"position_embedding_size", 64},
        {"standardize", false},
        {"use_clipped_linears", true}}},
  };
}

}  // namespace

std::vector<FamilyDef> gemma4_generators() {
  return {
      {"gemma4", true, "dtype", true, 256, 4, gemma4_config, gemma4_derive, gemma4_tensors},
  };
}

}  // namespace og::testgen
