// Nemotron (NemotronConfig): NemotronLayerNorm1P norms (a LayerNorm scaled by weight + 1, with
// a bias; eps norm_eps), Llama's attention with biases on q/k/v/o iff attention_bias and the
// rope on int(head_dim * partial_rotary_factor) dims, the ungated MLP down_proj(relu2(up_proj
// x)) with biases iff mlp_bias. Its decoder is layer_norm_like.cc's.
// Followed: models/nemotron/modeling_nemotron.py + configuration_nemotron.py.
#include "reference/families/families.h"
#include "reference/families/layer_norm_like.h"

namespace og::reference {
namespace {

constexpr LnVariant kVariant{.family = "nemotron", .eps_key = "norm_eps", .o_proj = "o_proj", .mlp_up = "up_proj",
                             .mlp_down = "down_proj", .final_norm = "norm", .attention_bias_key = "attention_bias",
                             .mlp_bias_key = "mlp_bias", .norm_offset = 1.0, .partial_rotary = true};
constexpr ModelType kTypes[] = {{"nemotron", false}};

}  // namespace

// NemotronConfig's defaults for keys a config.json may omit.
const Family kNemotronFamily{"nemotron", kTypes, false,
                             R"({"norm_eps": 1e-5, "hidden_act": "relu2", "partial_rotary_factor": 0.5,
                                 "rope_theta": 10000.0, "attention_bias": false, "mlp_bias": false})",
                             &layer_norm_like_forward_of<kVariant>, &layer_norm_like_windows_of<kVariant>};

}  // namespace og::reference
