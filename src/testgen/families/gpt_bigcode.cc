// GPTBigCode (GPTBigCodeForCausalLM, modeling_gpt_bigcode.py).
#include "testgen/families/gpt2.h"

namespace og::testgen {
namespace {

Result<std::vector<TensorSpec>> gpt_bigcode_tensors(const Json& text, const FamilyContext& ctx) {
  return gpt2_like_tensors(text, ctx, true);
}

// bigcode/starcoderbase's field set (multi_query, exact gelu, the softmax upcast switches,
// n_inner given, tied) at n_embd 64, 4 heads, 4096 positions.
Json gpt_bigcode_config() {
  return {
      {"activation_function", "gelu"},
      {"architectures", {"GPTBigCodeForCausalLM"}},
      {"attention_softmax_in_fp32", true},
      {"multi_query", true},
      {"attn_pdrop", 0.1},
      {"bos_token_id", 0},
      {"embd_pdrop", 0.1},
      {"eos_token_id", 0},
      {"initializer_range", 0.02},
      {"layer_norm_epsilon", 1e-05},
      {"model_type", "gpt_bigcode"},
      {"n_embd", 64},
      {"n_head", 4},
      {"n_inner", 256},
      {"n_layer", 4},
      {"n_positions", 4096},
      {"resid_pdrop", 0.1},
      {"scale_attention_softmax_in_fp32", true},
      {"scale_attn_weights", true},
      {"torch_dtype", "float32"},
      {"use_cache", true},
      {"vocab_size", 320},
  };
}

}  // namespace

std::vector<FamilyDef> gpt_bigcode_generators() {
  return {
      {"gpt_bigcode", false, "torch_dtype", true, 0, 0, gpt_bigcode_config, gpt2_like_derive, gpt_bigcode_tensors},
  };
}

}  // namespace og::testgen
