// GLM-4-0414 (Glm4Config): GLM's attention and MLP, each sublayer between two RMSNorms
// (input_layernorm / post_self_attn_layernorm, post_attention_layernorm / post_mlp_layernorm).
// Its decoder is the llama-like one (llama_like.cc). Followed: models/glm4/modular_glm4.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "glm4", .reads_attention_bias_qkv_only = true, .fused_gate_up = true,
                           .rope_pairs = true, .glm4_norms = true, .partial_rotary = true};
constexpr ModelType kTypes[] = {{"glm4", false}};

}  // namespace

// Glm4Config's defaults for keys a config.json may omit (GlmConfig's).
const Family kGlm4Family{"glm4", kTypes, false,
                         R"({"rms_norm_eps": 1.5625e-07, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
                             "num_key_value_heads": 2, "head_dim": 128})",
                         &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
