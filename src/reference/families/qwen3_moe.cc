// Qwen3-MoE (Qwen3MoeConfig): Qwen3's attention with Qwen3MoeSparseMoeBlock on the
// layers its config makes sparse (blocks.h sparse_moe). Its decoder is the llama-like one (llama_like.cc), with these
// switches. Followed: models/qwen3_moe/modeling_qwen3_moe.py + configuration_qwen3_moe.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "qwen3_moe", .qk_norm = true, .reads_attention_bias = true, .moe = MoeKind::kQwen3};
constexpr ModelType kTypes[] = {{"qwen3_moe", false}};

}  // namespace

// Qwen3MoeConfig: no head_dim key (modeling falls back to hidden_size / heads); 4 kv heads;
// transformers 5 saves num_experts as num_local_experts.
const Family kQwen3MoeFamily{"qwen3_moe", kTypes, false,
                             R"({"rms_norm_eps": 1e-6, "sliding_window": 4096, "intermediate_size": 6144,
                                 "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
                                 "norm_topk_prob": false, "decoder_sparse_step": 1, "num_key_value_heads": 4})",
                             &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr, R"({"num_local_experts": "num_experts"})"};

}  // namespace og::reference
