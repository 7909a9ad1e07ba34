// Mixtral (MixtralConfig): Mistral's attention (sliding_window, when set, on every layer) with
// MixtralSparseMoeBlock in place of the MLP on every layer: router block_sparse_moe.gate,
// softmax over all experts, the num_experts_per_tok most probable renormalized to sum 1,
// experts block_sparse_moe.experts.E.{w1,w3,w2} (gate, up, down; intermediate_size wide).
// Its decoder is the llama-like one (llama_like.cc), with these switches. Followed:
// models/mixtral/modular_mixtral.py + configuration_mixtral.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "mixtral", .sliding = SlidingRule::kEveryLayer, .moe = MoeKind::kMixtral};
constexpr ModelType kTypes[] = {{"mixtral", false}};

}  // namespace

// MixtralConfig's defaults for keys a config.json may omit (its attribute_map reads
// num_experts as num_local_experts).
const Family kMixtralFamily{"mixtral", kTypes, false,
                            R"({"rms_norm_eps": 1e-5, "num_key_value_heads": 8, "rope_theta": 1000000.0,
                                "num_local_experts": 8, "num_experts_per_tok": 2, "intermediate_size": 14336})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr,
                            R"({"num_experts": "num_local_experts"})"};

}  // namespace og::reference
