// OLMoE (model_type olmoe; OLMoE-1B-7B): Llama's pre-norm block with OLMo's q/k RMSNorms over
// the whole q (k) projection, before the split into heads, and on every layer a sparse
// mixture of experts in place of the MLP: router mlp.gate, softmax over all experts, the
// num_experts_per_tok largest, renormalized iff norm_topk_prob, experts
// mlp.experts.E.{gate,up,down}_proj of intermediate_size (qwen_moe.h's block, every layer
// sparse, no shared expert). Biases on q/k/v/o iff attention_bias. transformers'
// OlmoeForCausalLM.
#include <fmt/format.h>

#include "export/decoder.h"
#include "export/families/qwen_moe.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  // clip_qkv clamps q, k and v after the norms; no published OLMoE sets it.
  if (t.has("clip_qkv"))
    return unsupported("{}: field '{}' is set: offgraph does not clip q/k/v (only null is supported)", c.path,
                       t.field_name("clip_qkv"));
  QwenMoeConfig moe;
  OG_ASSIGN_OR_RETURN(moe.n_experts, t.get_int("num_experts"));
  OG_ASSIGN_OR_RETURN(moe.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(moe.normalize, t.get_bool("norm_topk_prob", false));
  moe.intermediate = c.intermediate_size[0];
  if (moe.n_experts < 1) return t.invalid("num_experts", "a positive integer");
  if (moe.top_k < 1 || moe.top_k > moe.n_experts || moe.top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(num_experts = {}, 64)", moe.n_experts));
  DecoderOptions o;
  o.qk_norm = true;
  o.qk_norm_whole = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.mlp = qwen_moe_block(std::move(moe), o.activation);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& olmoe_family() {
  static constexpr ModelType kTypes[] = {{"olmoe", false}};
  // transformers' OlmoeConfig: rms_norm_eps 1e-5, intermediate_size 2048 (the experts' width),
  // 64 experts, 8 per token, not renormalized; num_key_value_heads falls back to
  // num_attention_heads; no head_dim (hidden_size / heads); num_local_experts is its alias of
  // num_experts.
  static const Family f{.name = "olmoe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"intermediate_size", 2048},
                                            {"num_experts", 64},
                                            {"num_experts_per_tok", 8},
                                            {"norm_topk_prob", false}},
                        .config_aliases = {{"num_local_experts", "num_experts"}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
