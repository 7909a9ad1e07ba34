// Phi (PhiConfig): the parallel block attn(ln(x)) + mlp(ln(x)) + x, LayerNorms of eps
// layer_norm_eps, biases everywhere (q/k/v, dense, fc1/fc2, lm_head), partial rotary and the
// optional q/k LayerNorms. Its decoder is layer_norm_like.cc's. Followed:
// models/phi/modeling_phi.py + configuration_phi.py.
#include "reference/families/families.h"
#include "reference/families/layer_norm_like.h"

namespace og::reference {
namespace {

constexpr LnVariant kVariant{.family = "phi", .eps_key = "layer_norm_eps", .o_proj = "dense", .mlp_up = "fc1",
                             .mlp_down = "fc2", .final_norm = "final_layernorm", .parallel = Parallel::kAlways,
                             .always_bias = true, .partial_rotary = true, .qk_layernorm_key = "qk_layernorm"};
constexpr ModelType kTypes[] = {{"phi", false}};

}  // namespace

// PhiConfig's defaults for keys a config.json may omit.
const Family kPhiFamily{"phi", kTypes, false,
                        R"({"layer_norm_eps": 1e-5, "hidden_act": "gelu_new", "partial_rotary_factor": 0.5,
                            "rope_theta": 10000.0})",
                        &layer_norm_like_forward_of<kVariant>, &layer_norm_like_windows_of<kVariant>};

}  // namespace og::reference
