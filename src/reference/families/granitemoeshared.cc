// GraniteMoeShared (GraniteMoeSharedConfig): Granite MoE's decoder (granitemoe.cc) with
// GraniteMoeSharedMLP beside the experts on every token, ungated: shared_mlp.input_linear
// [2S, H] (gate rows, then up) and output_linear [H, S], S = shared_intermediate_size (none
// when 0). Its decoder is the llama-like one (llama_like.cc), with these switches. Followed:
// models/granitemoeshared/modular_granitemoeshared.py + configuration_granitemoeshared.py.
#include "reference/families/families.h"
#include "reference/families/llama_like.h"

namespace og::reference {
namespace {

constexpr Variant kVariant{.family = "granitemoeshared", .reads_attention_bias = true, .moe = MoeKind::kGraniteMoe,
                           .multipliers = true, .shared_mlp = true};
constexpr ModelType kTypes[] = {{"granitemoeshared", false}};

}  // namespace

// GraniteMoeSharedConfig's defaults for keys a config.json may omit.
const Family kGraniteMoeSharedFamily{"granitemoeshared", kTypes, false,
                                     R"({"rms_norm_eps": 1e-6, "intermediate_size": 11008, "num_local_experts": 8,
                                         "num_experts_per_tok": 2, "shared_intermediate_size": 0})",
                                     &llama_like_forward_of<kVariant>, &llama_like_windows_of<kVariant>};

}  // namespace og::reference
