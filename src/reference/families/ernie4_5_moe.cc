// ERNIE 4.5 MoE (Ernie4_5_MoeConfig): ERNIE 4.5 dense's attention (the rope on interleaved pairs
// of the whole head, no biases: use_bias is refused) with Ernie4_5_MoeSparseMoeBlock on the
// layers (l + 1) % moe_layer_interval == 0 within [moe_layer_start_index, moe_layer_end_index]:
// the softmax router whose probabilities plus mlp.moe_statics.e_score_correction_bias pick
// moe_k experts, weighted by their probabilities over max(sum, moe_norm_min), and the ungated
// shared experts (blocks.h sparse_moe). Its decoder is the llama-like one (llama_like.cc).
// Followed: models/ernie4_5_moe/modular_ernie4_5_moe.py + configuration_ernie4_5_moe.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "ernie4_5_moe", .rope_pairs = true, .moe = MoeKind::kErnie45Moe};
constexpr ModelType kTypes[] = {{"ernie4_5_moe", false}};

}  // namespace

// Ernie4_5_MoeConfig's defaults for keys a config.json may omit (tie_word_embeddings=True); its
// attribute_map reads num_experts and num_experts_per_tok as moe_num_experts and moe_k.
const Family kErnie45MoeFamily{"ernie4_5_moe", kTypes, true,
                               R"({"rms_norm_eps": 1e-5, "rope_theta": 500000.0, "num_key_value_heads": 4,
                                   "intermediate_size": 12288, "moe_intermediate_size": 1536, "moe_k": 6,
                                   "moe_num_experts": 64, "moe_num_shared_experts": 2, "moe_layer_start_index": 1,
                                   "moe_layer_end_index": -1, "moe_layer_interval": 1, "moe_norm_min": 1e-12})",
                               &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>, nullptr,
                               R"({"num_experts": "moe_num_experts", "num_experts_per_tok": "moe_k"})"};

}  // namespace og::reference
