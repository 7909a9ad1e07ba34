// Llama 1-3.x and SmolLM (LlamaConfig). Its decoder is the llama-like one (llama_like.cc), with these switches.
// Followed: models/llama/modeling_llama.py + configuration_llama.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "llama", .reads_attention_bias = true, .reads_mlp_bias = true};
constexpr ModelType kTypes[] = {{"llama", false}};

}  // namespace

// LlamaConfig's defaults for keys a config.json may omit.
const Family kLlamaFamily{"llama", kTypes, false, R"({"rms_norm_eps": 1e-6})", &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
