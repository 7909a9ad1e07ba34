// The generators' registry: one line per family file (families/F.cc, a sibling of
// export/families/F.cc and reference/families/F.cc), in generator order.
#include "testgen/family.h"

namespace og::testgen {

std::vector<FamilyDef> llama_generators();
std::vector<FamilyDef> mistral_generators();
std::vector<FamilyDef> mixtral_generators();
std::vector<FamilyDef> qwen2_moe_generators();
std::vector<FamilyDef> granite_generators();
std::vector<FamilyDef> olmo2_generators();
std::vector<FamilyDef> olmoe_generators();
std::vector<FamilyDef> glm4_moe_generators();
std::vector<FamilyDef> ernie4_5_moe_generators();
std::vector<FamilyDef> deepseek_v3_generators();
std::vector<FamilyDef> deepseek_v2_generators();
std::vector<FamilyDef> glm4_moe_lite_generators();
std::vector<FamilyDef> minimax_m2_generators();
std::vector<FamilyDef> dots1_generators();
std::vector<FamilyDef> seed_oss_generators();
std::vector<FamilyDef> arcee_generators();
std::vector<FamilyDef> nemotron_generators();
std::vector<FamilyDef> hunyuan_v1_dense_generators();
std::vector<FamilyDef> apertus_generators();
std::vector<FamilyDef> exaone4_generators();
std::vector<FamilyDef> granitemoe_generators();
std::vector<FamilyDef> granitemoeshared_generators();
std::vector<FamilyDef> olmo3_generators();
std::vector<FamilyDef> qwen2_generators();
std::vector<FamilyDef> qwen3_generators();
std::vector<FamilyDef> phi3_generators();
std::vector<FamilyDef> smollm3_generators();
std::vector<FamilyDef> qwen3_moe_generators();
std::vector<FamilyDef> gpt_oss_generators();
std::vector<FamilyDef> gemma_generators();
std::vector<FamilyDef> gemma2_generators();
std::vector<FamilyDef> gemma3_generators();
std::vector<FamilyDef> gemma4_generators();
std::vector<FamilyDef> gemma3n_generators();
std::vector<FamilyDef> starcoder2_generators();
std::vector<FamilyDef> phi_generators();
std::vector<FamilyDef> stablelm_generators();
std::vector<FamilyDef> cohere_generators();
std::vector<FamilyDef> cohere2_generators();
std::vector<FamilyDef> glm_generators();
std::vector<FamilyDef> glm4_generators();
std::vector<FamilyDef> ernie4_5_generators();
std::vector<FamilyDef> gpt_neox_generators();
std::vector<FamilyDef> gpt2_generators();
std::vector<FamilyDef> gpt_bigcode_generators();
std::vector<FamilyDef> falcon_generators();

const std::vector<FamilyDef>& all_families() {
  static const std::vector<FamilyDef> all = [] {
    std::vector<FamilyDef> v;
    for (auto* generators : {&llama_generators, &mistral_generators, &qwen2_generators, &qwen3_generators, &phi3_generators, &smollm3_generators, &qwen3_moe_generators, &mixtral_generators, &qwen2_moe_generators, &granite_generators, &olmo2_generators, &olmo3_generators, &gpt_oss_generators, &gemma_generators, &gemma2_generators, &gemma3_generators, &gemma4_generators, &gemma3n_generators, &starcoder2_generators, &phi_generators, &stablelm_generators, &cohere_generators, &cohere2_generators, &glm_generators, &glm4_generators, &ernie4_5_generators, &gpt_neox_generators, &gpt2_generators, &gpt_bigcode_generators, &falcon_generators, &olmoe_generators, &glm4_moe_generators, &ernie4_5_moe_generators, &deepseek_v3_generators, &deepseek_v2_generators, &glm4_moe_lite_generators, &minimax_m2_generators, &dots1_generators, &seed_oss_generators, &arcee_generators, &nemotron_generators, &hunyuan_v1_dense_generators, &apertus_generators, &exaone4_generators, &granitemoe_generators, &granitemoeshared_generators}) {
      std::vector<FamilyDef> defs = generators();
      v.insert(v.end(), defs.begin(), defs.end());
    }
    return v;
  }();
  return all;
}

}  // namespace og::testgen
