// GraniteMoeShared (GraniteMoeSharedForCausalLM, modular_granitemoeshared.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// GraniteMoeSharedDecoderLayer: Granite MoE's tensors plus shared_mlp.input_linear [2S, hidden]
// (gate rows, then up) and shared_mlp.output_linear [hidden, S] when shared_intermediate_size S > 0.
Result<std::vector<TensorSpec>> granitemoeshared_tensors(const Json& text, const FamilyContext& ctx) {
  return granite_moe_tensors(text, ctx, true);
}

// Granite MoE's tiny field set with a shared expert of width 48 beside the experts.
Json granitemoeshared_config() {
  Json c = granitemoe_config();
  c["architectures"] = {"GraniteMoeSharedForCausalLM"};
  c["model_type"] = "granitemoeshared";
  c["shared_intermediate_size"] = 48;
  return c;
}

}  // namespace

std::vector<FamilyDef> granitemoeshared_generators() {
  return {
      {"granitemoeshared", false, "torch_dtype", false, 0, 0, granitemoeshared_config, nullptr, granitemoeshared_tensors},
  };
}

}  // namespace og::testgen
