// GLM (GlmConfig): Llama's decoder with Phi-3's fused gate_up_proj and RMSNorm, q/k/v biases
// iff attention_bias (default true, o_proj never), and the rope on interleaved pairs of the
// first int(head_dim * partial_rotary_factor) dims (default 0.5). Its decoder is the llama-like
// one (llama_like.cc). Followed: models/glm/modular_glm.py + configuration_glm.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "glm", .reads_attention_bias_qkv_only = true, .fused_gate_up = true,
                           .rope_pairs = true, .partial_rotary = true};
constexpr ModelType kTypes[] = {{"glm", false}};

}  // namespace

// GlmConfig's defaults for keys a config.json may omit.
const Family kGlmFamily{"glm", kTypes, false,
                        R"({"rms_norm_eps": 1.5625e-07, "partial_rotary_factor": 0.5, "rope_theta": 10000.0,
                            "num_key_value_heads": 2, "head_dim": 128})",
                        &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
