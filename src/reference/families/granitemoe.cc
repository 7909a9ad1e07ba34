// Granite MoE (GraniteMoeConfig): Granite's decoder (multipliers, attention biases) with
// GraniteMoeMoE on every layer: JetMoeTopKGating (router block_sparse_moe.router.layer, the
// top num_experts_per_tok logits softmaxed) and JetMoeParallelExperts stored fused,
// input_linear [E, 2I, H] chunked into gate and up, output_linear [E, H, I]. Its decoder is the
// llama-like one (llama_like.cc), with these switches. Followed:
// models/granitemoe/modular_granitemoe.py, models/jetmoe/modeling_jetmoe.py +
// configuration_granitemoe.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "granitemoe", .reads_attention_bias = true, .moe = MoeKind::kGraniteMoe, .multipliers = true};
constexpr ModelType kTypes[] = {{"granitemoe", false}};

}  // namespace

// GraniteMoeConfig's defaults for keys a config.json may omit (the multipliers' 1.0 are read
// where they are used).
const Family kGraniteMoeFamily{"granitemoe", kTypes, false,
                               R"({"rms_norm_eps": 1e-6, "intermediate_size": 11008, "num_local_experts": 8,
                                   "num_experts_per_tok": 2})",
                               &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
