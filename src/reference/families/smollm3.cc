// SmolLM3 (SmolLM3Config): Llama's block with NoPE layers (no_rope_layers). Its decoder is the llama-like one
// (llama_like.cc), with these switches. Followed: models/smollm3/modeling_smollm3.py + configuration_smollm3.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

// SmolLM3's apply_rotary_pos_emb multiplies whole heads by cos/sin, so a partial rotary width
// could not run in transformers: partial_rotary stays off (an error naming the field).
constexpr Variant kVariant{.family = "smollm3",
                           .sliding = SlidingRule::kSmolLM3,
                           .reads_attention_bias = true,
                           .reads_mlp_bias = true,
                           .nope_layers = true};
constexpr ModelType kTypes[] = {{"smollm3", false}};

}  // namespace

// SmolLM3Config: rope_theta 2e6, 4 kv heads, a NoPE layer every 4th, tied embeddings.
const Family kSmolLM3Family{"smollm3", kTypes, true,
                            R"({"vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008,
                                "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
                                "hidden_act": "silu", "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
                                "rope_theta": 2000000.0, "use_sliding_window": false,
                                "no_rope_layer_interval": 4, "attention_bias": false, "mlp_bias": false})",
                            &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
