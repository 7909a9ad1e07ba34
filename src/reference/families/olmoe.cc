// OLMoE (OlmoeConfig): Llama's pre-norm block, q_norm and k_norm over the whole q (k)
// projection before the split into heads (as OLMo 2's), and on every layer
// OlmoeSparseMoeBlock: router mlp.gate, softmax over all experts, the top num_experts_per_tok,
// renormalized iff norm_topk_prob, experts mlp.experts.E.{gate,up,down}_proj of
// intermediate_size (blocks.h sparse_moe). clip_qkv is refused. Its decoder is the llama-like
// one (llama_like.cc), with these switches. Followed: models/olmoe/modeling_olmoe.py +
// configuration_olmoe.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "olmoe", .reads_attention_bias = true, .moe = MoeKind::kOlmoe, .qk_norm_whole = true};
constexpr ModelType kTypes[] = {{"olmoe", false}};

}  // namespace

// OlmoeConfig's defaults for keys a config.json may omit; num_local_experts is its alias of
// num_experts.
const Family kOlmoeFamily{"olmoe", kTypes, false,
                          R"({"rms_norm_eps": 1e-5, "intermediate_size": 2048, "num_experts": 64,
                              "num_experts_per_tok": 8, "norm_topk_prob": false})",
                          &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr,
                          R"({"num_local_experts": "num_experts"})"};

}  // namespace og::reference
