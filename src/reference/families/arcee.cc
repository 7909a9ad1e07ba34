// Arcee (ArceeConfig): Llama's pre-norm decoder and attention (biases on q/k/v/o iff
// attention_bias) with NemotronMLP's ungated down_proj(act(up_proj x)), act relu2 by default,
// biases iff mlp_bias. Its decoder is the llama-like one (llama_like.cc).
// Followed: models/arcee/modular_arcee.py + configuration_arcee.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "arcee", .reads_attention_bias = true, .reads_mlp_bias = true, .plain_mlp = true};
constexpr ModelType kTypes[] = {{"arcee", false}};

}  // namespace

// ArceeConfig's defaults for keys a config.json may omit.
const Family kArceeFamily{"arcee", kTypes, false,
                          R"({"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "relu2",
                              "attention_bias": false, "mlp_bias": false, "tie_word_embeddings": false})",
                          &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
