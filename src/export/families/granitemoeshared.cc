// Granite MoE with a shared expert (model_type granitemoeshared): granitemoe.cc's decoder with
// GraniteMoeSharedMLP, shared_mlp.input_linear [2S, H] (gate rows, then up) and output_linear
// [H, S] with S = shared_intermediate_size, added ungated to the experts' sum on every token
// (none when 0). transformers' GraniteMoeSharedForCausalLM.
#include "export/families/granite.h"
#include "export/family.h"

namespace og::exporter {

const Family& granitemoeshared_family() {
  static constexpr ModelType kTypes[] = {{"granitemoeshared", false}};
  // transformers' GraniteMoeSharedConfig: GraniteMoeConfig's defaults, shared_intermediate_size 0.
  static const Family f{.name = "granitemoeshared",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"intermediate_size", 11008},
                                            {"num_local_experts", 8},
                                            {"num_experts_per_tok", 2}},
                        .build = [](BuildContext& ctx) { return build_granite_moe(ctx, true); }};
  return f;
}

}  // namespace og::exporter
