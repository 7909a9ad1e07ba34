// Llama 1-3.x and SmolLM (LlamaConfig). Its decoder is the llama-like one (llama_like.cc), with these switches.
// Followed: models/llama/modeling_llama.py + configuration_llama.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "llama", .reads_attention_bias = true, .reads_mlp_bias = true};
constexpr ModelType kTypes[] = {{"llama", false}};

Result<std::vector<double>> this_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                    std::span<const int32_t> tokens, const ForwardOptions&) {
  return llama_like_forward(kVariant, c, ckpt, tokens);
}

Result<std::vector<int64_t>> this_windows(const hf::ModelConfig& c) { return llama_like_windows(kVariant, c); }

}  // namespace

// LlamaConfig's defaults for keys a config.json may omit.
const Family kLlamaFamily{"llama", kTypes, false, R"({"rms_norm_eps": 1e-6})", &this_forward, &this_windows};

}  // namespace og::reference
