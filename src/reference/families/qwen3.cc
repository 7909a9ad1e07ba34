// Qwen3 (Qwen3Config): q_norm/k_norm over head_dim before RoPE, Qwen's sliding rule. Its decoder is the llama-like one
// (llama_like.cc), with these switches. Followed: models/qwen3/modeling_qwen3.py + configuration_qwen3.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{
    .family = "qwen3", .sliding = SlidingRule::kQwen, .qk_norm = true, .reads_attention_bias = true};
constexpr ModelType kTypes[] = {{"qwen3", false}};

}  // namespace

// Qwen3Config: head_dim 128; sliding_window 4096 applies only with use_sliding_window.
const Family kQwen3Family{"qwen3", kTypes, false, R"({"rms_norm_eps": 1e-6, "head_dim": 128, "sliding_window": 4096})",
                          &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
