// The registry: one line per family. A new family is a file here, its siblings in
// reference/families and testgen/families, and a line in each registry
// (FamilyRegistries.EveryExportedFamilyHasAReferenceAndAGenerator holds the three together).
#include <array>

#include "export/family.h"

namespace og::exporter {

const Family& llama_family();
const Family& mistral_family();
const Family& mixtral_family();
const Family& qwen2_family();
const Family& qwen3_family();
const Family& qwen3_moe_family();
const Family& qwen2_moe_family();
const Family& granite_family();
const Family& olmo2_family();
const Family& olmo3_family();
const Family& phi3_family();
const Family& gemma_family();
const Family& gemma2_family();
const Family& gemma3_family();
const Family& gemma3n_family();
const Family& gemma4_family();
const Family& smollm3_family();
const Family& gpt_oss_family();
const Family& starcoder2_family();
const Family& phi_family();
const Family& stablelm_family();
const Family& cohere_family();
const Family& cohere2_family();
const Family& glm_family();
const Family& glm4_family();
const Family& ernie4_5_family();
const Family& gpt_neox_family();
const Family& gpt2_family();
const Family& gpt_bigcode_family();
const Family& falcon_family();
const Family& olmoe_family();
const Family& glm4_moe_family();
const Family& ernie4_5_moe_family();
const Family& deepseek_v3_family();
const Family& deepseek_v2_family();
const Family& glm4_moe_lite_family();
const Family& minimax_m2_family();
const Family& dots1_family();
const Family& seed_oss_family();
const Family& arcee_family();
const Family& nemotron_family();
const Family& hunyuan_v1_dense_family();
const Family& apertus_family();
const Family& exaone4_family();
const Family& granitemoe_family();
const Family& granitemoeshared_family();

std::span<const Family* const> all_families() {
  static const std::array kFamilies = std::to_array<const Family*>({
      &llama_family(),   &mistral_family(), &qwen2_family(),   &qwen3_family(),   &qwen3_moe_family(), &phi3_family(),
      &gemma2_family(),  &gemma3_family(),  &gemma3n_family(), &gemma4_family(),  &smollm3_family(),   &gpt_oss_family(),
      &mixtral_family(), &qwen2_moe_family(), &granite_family(), &olmo2_family(), &olmo3_family(), &gemma_family(),
      &starcoder2_family(), &phi_family(), &stablelm_family(), &cohere_family(), &cohere2_family(), &glm_family(), &glm4_family(), &ernie4_5_family(), &gpt_neox_family(), &olmoe_family(), &granitemoe_family(), &granitemoeshared_family(), &glm4_moe_family(), &ernie4_5_moe_family(), &deepseek_v3_family(),
      &deepseek_v2_family(), &glm4_moe_lite_family(), &minimax_m2_family(), &dots1_family(), &seed_oss_family(), &arcee_family(), &nemotron_family(), &hunyuan_v1_dense_family(), &apertus_family(), &exaone4_family(), &gpt2_family(), &gpt_bigcode_family(), &falcon_family(),
  });
  return kFamilies;
}

}  // namespace og::exporter
