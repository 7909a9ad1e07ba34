// StableLM (StableLmConfig): LayerNorms of eps layer_norm_eps, Llama's gated MLP, q/k/v
// biases iff use_qkv_bias, partial rotary, the parallel block iff use_parallel_residual;
// with qk_layernorm a weight-only LayerNorm per head on q and k (StableLmLayerNormPerHead:
// self_attn.q_layernorm.norms.{h}.weight), before the rotation. Its decoder is layer_norm_like.cc's.
// Followed: models/stablelm/modeling_stablelm.py + configuration_stablelm.py.
#include "reference/families/families.h"
#include "reference/families/layer_norm_like.h"

namespace og::reference {
namespace {

constexpr LnVariant kVariant{.family = "stablelm", .eps_key = "layer_norm_eps", .o_proj = "o_proj", .final_norm = "norm",
                             .parallel = Parallel::kField, .qkv_bias_key = "use_qkv_bias", .partial_rotary = true,
                             .qk_layernorm_key = "qk_layernorm", .qk_norm_heads_list = "norms"};
constexpr ModelType kTypes[] = {{"stablelm", false}};

}  // namespace

// StableLmConfig's defaults for keys a config.json may omit.
const Family kStableLmFamily{"stablelm", kTypes, false,
                             R"({"layer_norm_eps": 1e-5, "hidden_act": "silu", "partial_rotary_factor": 0.25,
                                 "rope_theta": 10000.0})",
                             &layer_norm_like_forward_of<kVariant>, &layer_norm_like_windows_of<kVariant>};

}  // namespace og::reference
