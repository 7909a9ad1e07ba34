// StarCoder2 (Starcoder2Config): LayerNorms of eps norm_epsilon, the plain MLP c_fc/c_proj,
// biases on every projection iff use_bias, sliding_window on every layer. Its decoder is
// layer_norm_like.cc's. Followed: models/starcoder2/modeling_starcoder2.py + configuration.
#include "reference/families/families.h"
#include "reference/families/layer_norm_like.h"

namespace og::reference {
namespace {

constexpr LnVariant kVariant{.family = "starcoder2", .eps_key = "norm_epsilon", .o_proj = "o_proj", .mlp_up = "c_fc",
                             .mlp_down = "c_proj", .final_norm = "norm", .all_bias_key = "use_bias",
                             .windows = Windows::kEveryLayer};
constexpr ModelType kTypes[] = {{"starcoder2", false}};

}  // namespace

// Starcoder2Config's defaults for keys a config.json may omit; tie_word_embeddings is
// PretrainedConfig's (true).
const Family kStarcoder2Family{"starcoder2", kTypes, true,
                               R"({"norm_epsilon": 1e-5, "hidden_act": "gelu_pytorch_tanh", "rope_theta": 10000.0})",
                               &layer_norm_like_forward_of<kVariant>, &layer_norm_like_windows_of<kVariant>};

}  // namespace og::reference
