// Gemma 3: gemma3_text (Gemma3ForCausalLM) and gemma3 (Gemma3ForConditionalGeneration, its
// language-model tensors only), after modeling_gemma3.py: Gemma 2's norms plus self_attn.q_norm /
// k_norm over head_dim. The wrapper holds the text model at model.language_model.* and the head
// at lm_head; save_pretrained (and the hub) write language_model.model.* and
// language_model.lm_head instead (GenOptions::hub_layout).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/gemma.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> gemma3_text_tensors(const Json& text, const FamilyContext& ctx) {
  return gemma_tensors(text, ctx, GemmaShape{.qk_norm = true});
}

Result<std::vector<TensorSpec>> gemma3_tensors(const Json& text, const FamilyContext& ctx) {
  GemmaShape shape{.qk_norm = true, .prefix = "model.language_model."};
  if (ctx.hub_layout) {
    shape.prefix = "language_model.model.";
    shape.head_name = "language_model.lm_head.weight";
  }
  return gemma_tensors(text, ctx, shape);
}

// Fields of Gemma3TextConfig that gemma3_text and gemma3's text_config share.
Json gemma3_text_fields() {
  return {
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"attn_logit_softcapping", nullptr},
      {"bos_token_id", 2},
      {"cache_implementation", "hybrid"},
      {"final_logit_softcapping", nullptr},
      {"head_dim", 32},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 128},
      {"max_position_embeddings", 4096},
      {"model_type", "gemma3_text"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 6},
      {"num_key_value_heads", 2},
      {"pad_token_id", 0},
      {"query_pre_attn_scalar", 32},
      {"rms_norm_eps", 1e-6},
      {"rope_local_base_freq", 10000.0},
      {"rope_scaling", nullptr},
      {"rope_theta", 1000000.0},
      {"sliding_window", 5},
      {"sliding_window_pattern", 3},
      {"tie_word_embeddings", true},
      {"use_cache", true},
      {"vocab_size", 384},
  };
}

// gemma-3-1b-it's field set: no layer_types, sliding_window_pattern 3 puts full attention
// at layers 2 and 5 and a window of 5 elsewhere.
Json gemma3_text_config() {
  Json c = gemma3_text_fields();
  c["architectures"] = {"Gemma3ForCausalLM"};
  c["eos_token_id"] = {1, 5};
  c["transformers_version"] = "4.57.1";
  return c;
}

// gemma-3-4b-it's layout: the text model under text_config (with the 4b's linear rope
// scaling of the global layers), a SigLIP vision_config, image token ids at the top.
Json gemma3_config() {
  Json text = gemma3_text_fields();
  text["eos_token_id"] = 1;
  text["rope_scaling"] = {{"factor", 8.0}, {"rope_type", "linear"}};
  text["sliding_window"] = 4;
  return {
      {"architectures", {"Gemma3ForConditionalGeneration"}},
      {"boi_token_index", 380},
      {"eoi_token_index", 381},
      {"eos_token_id", {1, 5}},
      {"image_token_index", 382},
      {"initializer_range", 0.02},
      {"mm_tokens_per_image", 4},
      {"model_type", "gemma3"},
      {"text_config", text},
      {"tie_word_embeddings", true},
      {"transformers_version", "4.57.1"},
      {"vision_config",
       {{"hidden_size", 32},
        {"image_size", 32},
        {"intermediate_size", 64},
        {"model_type", "siglip_vision_model"},
        {"num_attention_heads", 2},
        {"num_hidden_layers", 1},
        {"patch_size", 8},
        {"vision_use_head", false}}},
  };
}

}  // namespace

std::vector<FamilyDef> gemma3_generators() {
  return {
      {"gemma3_text", false, "torch_dtype", true, 256, 4, gemma3_text_config, nullptr, gemma3_text_tensors},
      {"gemma3", true, "torch_dtype", true, 256, 4, gemma3_config, nullptr, gemma3_tensors},
  };
}

}  // namespace og::testgen
