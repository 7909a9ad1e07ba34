// OLMo 3 (Olmo3ForCausalLM, modular_olmo3.py): OLMo 2's tensors (olmo_tensors).
#include "testgen/families/llama_like.h"

namespace og::testgen {
namespace {

// Olmo-3's field set: layer_types absent, so three sliding layers (window 6) then a full one;
// yarn on the full layers only, with the pretraining context shrunk from 8192 to 16 so that a
// test sequence reaches the positions where yarn's ramp matters.
Json olmo3_config() {
  Json c = olmo2_config();  // Olmo3Config extends Olmo2's fields
  c.update({
      {"architectures", {"Olmo3ForCausalLM"}},
      {"model_type", "olmo3"},
      {"rope_scaling",
       {{"rope_type", "yarn"}, {"factor", 8.0}, {"original_max_position_embeddings", 16}, {"beta_fast", 32}, {"beta_slow", 1}}},
      {"sliding_window", 6},
      {"transformers_version", "4.57.0"},
  });
  return c;
}

}  // namespace

std::vector<FamilyDef> olmo3_generators() {
  return {
      {"olmo3", false, "torch_dtype", false, 0, 0, olmo3_config, nullptr, olmo_tensors},
  };
}

}  // namespace og::testgen
