// GPTBigCode (GPTBigCodeConfig; transformers models/gpt_bigcode/): GPT-2's decoder with nn.Linear
// projections and multi-query attention (reference/families/gpt2_like.h, the forward in gpt2.cc).
#include "reference/families/families.h"
#include "reference/families/gpt2_like.h"

namespace og::reference {
namespace {

Result<std::vector<double>> gpt_bigcode_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                                std::span<const int32_t> tokens, const ForwardOptions&) {
  return gpt2_like_forward(c, ckpt, tokens, {.linear = true, .default_activation = "gelu_pytorch_tanh"});
}

constexpr ModelType kTypes[] = {{"gpt_bigcode", false}};

}  // namespace

// GPTBigCodeConfig's defaults for keys a config.json may omit (tie_word_embeddings=True), and
// its attribute_map (GPT-2's) as aliases.
const Family kGptBigCodeFamily{"gpt_bigcode", kTypes, true,
                               R"({"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
                                   "n_inner": null, "activation_function": "gelu_pytorch_tanh", "layer_norm_epsilon": 1e-5,
                                   "scale_attn_weights": true, "multi_query": true})",
                               &gpt_bigcode_forward, &gpt2_like_windows, nullptr,
                               R"({"n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                                   "n_positions": "max_position_embeddings"})",
                               &gpt2_like_derive};

}  // namespace og::reference
