// Seed-OSS (SeedOssForCausalLM, modular_seed_oss.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// SeedOssDecoderLayer: Llama's tensors with q/k/v biases iff attention_bias (default true),
// o_proj's iff attention_out_bias, the MLP's iff mlp_bias.
Result<std::vector<TensorSpec>> seed_oss_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape;
  shape.qkv_bias = !text.contains("attention_bias") || text["attention_bias"].get<bool>();
  OG_ASSIGN_OR_RETURN(shape.o_bias, flag(text, ctx, "attention_out_bias"));
  OG_ASSIGN_OR_RETURN(shape.mlp_bias, flag(text, ctx, "mlp_bias"));
  return llama_shaped_tensors(text, ctx, shape);
}

// Seed-OSS-36B-Instruct's field set (tests/data/configs/Seed-OSS-36B-Instruct.json: q/k/v biases
// but not o_proj's, head_dim 128 against hidden_size / heads = 64, rope_theta 1e7, untied) with
// head_dim 32 against 64 / 4 = 16, and o_proj biased too so that field is exercised.
Json seed_oss_config() {
  return {
      {"architectures", {"SeedOssForCausalLM"}},
      {"attention_bias", true},
      {"attention_dropout", 0.1},
      {"attention_out_bias", true},
      {"bos_token_id", 0},
      {"eos_token_id", 2},
      {"head_dim", 32},
      {"hidden_act", "silu"},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 96},
      {"max_position_embeddings", 524288},
      {"mlp_bias", false},
      {"model_type", "seed_oss"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 1},
      {"residual_dropout", 0.1},
      {"rms_norm_eps", 1e-06},
      {"rope_scaling", {{"rope_type", "default"}}},
      {"rope_theta", 10000000.0},
      {"tie_word_embeddings", false},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> seed_oss_generators() {
  return {
      {"seed_oss", false, "torch_dtype", false, 128, 8, seed_oss_config, nullptr, seed_oss_tensors},
  };
}

}  // namespace og::testgen
