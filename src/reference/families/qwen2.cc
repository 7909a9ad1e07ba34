// Qwen2 (Qwen2Config): q/k/v always biased, o never; Qwen's sliding rule. Its decoder is the llama-like one
// (llama_like.cc), with these switches. Followed: models/qwen2/modeling_qwen2.py + configuration_qwen2.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "qwen2", .sliding = SlidingRule::kQwen, .qkv_bias = true};
constexpr ModelType kTypes[] = {{"qwen2", false}};

}  // namespace

// Qwen2Config: sliding_window 4096 applies only with use_sliding_window.
const Family kQwen2Family{"qwen2", kTypes, false, R"({"rms_norm_eps": 1e-6, "sliding_window": 4096})",
                          &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
