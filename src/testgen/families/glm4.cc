// GLM-4-0414 (Glm4ForCausalLM, modular_glm4.py).
#include "testgen/families/llama_like.h"

namespace og::testgen {

Result<std::vector<TensorSpec>> glm_tensors(const Json& text, const FamilyContext& ctx, bool glm4_norms);  // glm.cc
Json glm_config_for(const char* model_type, const char* architecture);                                   // glm.cc

namespace {

Result<std::vector<TensorSpec>> glm4_tensors(const Json& text, const FamilyContext& ctx) { return glm_tensors(text, ctx, true); }
Json glm4_config() { return glm_config_for("glm4", "Glm4ForCausalLM"); }

}  // namespace

std::vector<FamilyDef> glm4_generators() {
  return {
      {"glm4", false, "torch_dtype", false, 128, 2, glm4_config, nullptr, glm4_tensors},
  };
}

}  // namespace og::testgen
