// Apertus (ApertusForCausalLM, modular_apertus.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// ApertusDecoderLayer: Llama's attention (biases iff attention_bias) with q_norm / k_norm,
// norms attention_layernorm / feedforward_layernorm, the ungated up_proj / down_proj, and
// XIELUActivation's scalars mlp.act_fn.alpha_p, alpha_n [1] (softplus-parameterized; drawn
// around transformers' initial values) and beta, eps [] (0.5 and -1e-6 as initialized, beta
// drawn around it so that the reading of each is exercised).
Result<std::vector<TensorSpec>> apertus_tensors(const Json& text, const FamilyContext& ctx) {
  LlamaShape shape;
  OG_ASSIGN_OR_RETURN(shape.qkv_bias, flag(text, ctx, "attention_bias"));
  shape.o_bias = shape.qkv_bias;
  shape.qk_norm = true;
  shape.plain_mlp = true;
  shape.input_norm = "attention_layernorm";
  shape.ff_norm = "feedforward_layernorm";
  OG_ASSIGN_OR_RETURN(std::vector<TensorSpec> specs, llama_shaped_tensors(text, ctx, shape));
  const int64_t layers = text.at("num_hidden_layers").get<int64_t>();
  for (int64_t l = 0; l < layers; ++l) {
    const std::string a = "model.layers." + std::to_string(l) + ".mlp.act_fn.";
    specs.push_back({a + "alpha_p", {1}, {0.4, 0.3}});   // log(expm1(0.8)) = 0.39
    specs.push_back({a + "alpha_n", {1}, {-0.9, 0.3}});  // log(expm1(0.8 - 0.5)) = -1.05
    specs.push_back({a + "beta", {}, {0.5, 0.1}});
    specs.push_back({a + "eps", {}, {-1e-6, 0.0}});
  }
  return specs;
}

// An Apertus-8B fine-tune's field set (tests/data/configs/Science-Expert-R1.json: xielu, q/k
// norms, llama3 rope with theta 1.2e7 and factor 8 from 8192, untied, the unread qk_norm,
// post_norm and hidden_dropout) at head_dim 16, its llama3 rope from 16 original positions.
Json apertus_config() {
  return {
      {"architectures", {"ApertusForCausalLM"}},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 1},
      {"dtype", "float32"},
      {"eos_token_id", 2},
      {"hidden_act", "xielu"},
      {"hidden_dropout", 0.0},
      {"hidden_size", 64},
      {"initializer_range", 0.02},
      {"intermediate_size", 160},
      {"max_position_embeddings", 65536},
      {"mlp_bias", false},
      {"model_type", "apertus"},
      {"num_attention_heads", 4},
      {"num_hidden_layers", 4},
      {"num_key_value_heads", 2},
      {"pad_token_id", 3},
      {"post_norm", false},
      {"qk_norm", true},
      {"rms_norm_eps", 1e-05},
      {"rope_scaling",
       {{"factor", 8.0}, {"high_freq_factor", 4.0}, {"low_freq_factor", 1.0}, {"original_max_position_embeddings", 16},
        {"rope_type", "llama3"}, {"type", "llama3"}}},
      {"rope_theta", 12000000},
      {"tie_word_embeddings", false},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> apertus_generators() {
  return {
      {"apertus", false, "dtype", false, 0, 0, apertus_config, nullptr, apertus_tensors},
  };
}

}  // namespace og::testgen
