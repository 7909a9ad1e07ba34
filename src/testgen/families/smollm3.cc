// SmolLM3 (SmolLM3ForCausalLM, modeling_smollm3.py): Llama's tensors, NoPE layers.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

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

std::vector<FamilyDef> smollm3_generators() {
  return {
      // SmolLM3Attention/MLP: Llama's biases (attention_bias, mlp_bias); SmolLM3Config: 4 kv heads, tied.
      {"smollm3", false, "torch_dtype", true, 0, 4, smollm3_config, smollm3_derive, llama_tensors},
  };
}

}  // namespace og::testgen
