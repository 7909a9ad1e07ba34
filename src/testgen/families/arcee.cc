// Arcee (ArceeForCausalLM, modular_arcee.py: AFM-4.5B).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// ArceeDecoderLayer: Llama's tensors with NemotronMLP's ungated up_proj / down_proj; biases on
// q/k/v/o iff attention_bias, on the MLP iff mlp_bias.
Result<std::vector<TensorSpec>> arcee_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  OG_ASSIGN_OR_RETURN(shape.mlp_bias, flag(text, ctx, "mlp_bias"));
  shape.plain_mlp = true;
  return llama_shaped_tensors(text, ctx, shape);
}

// An AFM-4.5B fine-tune's field set (tests/data/configs/Austral-AFM-SFT.json: relu2, YaRN factor
// 20 over 4096 positions with mscale 1, head_dim 128 given, untied) at head_dim 16, with
// its YaRN factor 4 over 16 original positions so the tests' positions pass them.
Json arcee_config() {
  return {
      {"architectures", {"ArceeForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"dtype", "float32"},
      {"eos_token_id", 2},
      {"head_dim", 16},
      {"hidden_act", "relu2"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 4096},
      {"mlp_bias", false},
      {"model_type", "arcee"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"rms_norm_eps", 1e-05},
      {"rope_scaling",
       {{"beta_fast", 32.0}, {"beta_slow", 1.0}, {"factor", 4.0}, {"mscale", 1.0},
        {"original_max_position_embeddings", 16}, {"rope_type", "yarn"}, {"type", "yarn"}}},
      {"rope_theta", 10000.0},
      {"tie_word_embeddings", false},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> arcee_generators() {
  return {
      {"arcee", false, "dtype", false, 0, 0, arcee_config, nullptr, arcee_tensors},
  };
}

}  // namespace og::testgen
