// Apertus (ApertusConfig): Llama's pre-norm decoder with norms attention_layernorm and
// feedforward_layernorm, per-head q_norm / k_norm before the rope (llama3 scaling by default),
// q/k/v/o biases iff attention_bias, and the ungated MLP down_proj(xIELU(up_proj x)) without
// biases, each layer's xIELU from its mlp.act_fn scalars. Its decoder is the llama-like one.
// Followed: models/apertus/modular_apertus.py + configuration_apertus.py, activations.py
// (XIELUActivation).
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "apertus", .qk_norm = true, .reads_attention_bias = true, .plain_mlp = true,
                           .xielu_mlp = true, .input_norm = "attention_layernorm", .ff_norm = "feedforward_layernorm"};
constexpr ModelType kTypes[] = {{"apertus", false}};

}  // namespace

// ApertusConfig's defaults for keys a config.json may omit (its default rope: llama3).
const Family kApertusFamily{"apertus", kTypes, false,
                            R"({"rms_norm_eps": 1e-5, "hidden_act": "xielu", "attention_bias": false,
                                "tie_word_embeddings": false, "rope_theta": 12000000.0,
                                "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192,
                                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0}})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
