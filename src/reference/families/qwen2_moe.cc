// Qwen2-MoE (Qwen2MoeConfig): Qwen2's attention (q/k/v biased iff qkv_bias, o never) with
// Qwen2MoeSparseMoeBlock on the layers its config makes sparse: Qwen3-MoE's routed experts
// plus a shared expert on every token scaled by sigmoid(mlp.shared_expert_gate(x)). Its
// decoder is the llama-like one (llama_like.cc), with these switches. Followed:
// models/qwen2_moe/modeling_qwen2_moe.py, modular_qwen2_moe.py + configuration_qwen2_moe.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "qwen2_moe", .reads_qkv_bias = true, .moe = MoeKind::kQwen2};
constexpr ModelType kTypes[] = {{"qwen2_moe", false}};

}  // namespace

// Qwen2MoeConfig: no head_dim key (hidden_size / heads); num_key_value_heads 16.
const Family kQwen2MoeFamily{"qwen2_moe", kTypes, false,
                             R"({"rms_norm_eps": 1e-6, "sliding_window": 4096, "intermediate_size": 5632,
                                 "num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
                                 "shared_expert_intermediate_size": 5632, "norm_topk_prob": false,
                                 "decoder_sparse_step": 1, "num_key_value_heads": 16})",
                             &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
