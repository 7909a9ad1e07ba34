// Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention (biases on q/k/v when qkv_bias,
// never on o) with Qwen's sparse mixture-of-experts block and its shared expert (qwen_moe.h)
// on the layers its config makes sparse.
#include "export/decoder.h"
#include "export/families/qwen_moe.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  OG_TRY(refuse_qwen_moe_sliding(c, "qwen2_moe"));
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers), "full_attention");
}

Result<int64_t> sliding_window(const hf::ModelConfig& c) {
  OG_TRY(refuse_qwen_moe_sliding(c, "qwen2_moe"));
  return 0;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  OG_TRY(refuse_qwen_moe_sliding(c, "qwen2_moe"));
  OG_ASSIGN_OR_RETURN(QwenMoeConfig moe, read_qwen_moe_config(c, /*shared_expert=*/true));
  DecoderOptions o;
  // Qwen2MoeConfig.qkv_bias (transformers 5; earlier versions hard-code the biases).
  OG_ASSIGN_OR_RETURN(o.qkv_bias, c.text_fields().get_bool("qkv_bias", true));
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.mlp = qwen_moe_block(std::move(moe), o.activation);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& qwen2_moe_family() {
  static constexpr ModelType kTypes[] = {{"qwen2_moe", false}};
  // transformers' Qwen2MoeConfig defaults for keys that published configs omit (no head_dim:
  // hidden_size / heads; num_key_value_heads 16 whatever num_attention_heads is).
  static const Family f{.name = "qwen2_moe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"sliding_window", 4096},
                                            {"intermediate_size", 5632},
                                            {"num_experts", 60},
                                            {"num_experts_per_tok", 4},
                                            {"moe_intermediate_size", 1408},
                                            {"shared_expert_intermediate_size", 5632},
                                            {"norm_topk_prob", false},
                                            {"decoder_sparse_step", 1},
                                            {"num_key_value_heads", 16}},
                        .default_layer_types = default_layer_types,
                        .sliding_window = sliding_window,
                        .build = build};
  return f;
}

}  // namespace og::exporter
