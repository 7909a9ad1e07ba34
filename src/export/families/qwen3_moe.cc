// Qwen3-MoE: Qwen3's attention (q/k RMSNorm per head, attention_bias on q/k/v/o) with
// Qwen's sparse mixture-of-experts block (qwen_moe.h, no shared expert) on the layers its
// config makes sparse.
#include "export/decoder.h"
#include "export/families/qwen_moe.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  OG_TRY(refuse_qwen_moe_sliding(c, "qwen3_moe"));
  return std::vector<std::string>(static_cast<size_t>(c.num_hidden_layers), "full_attention");
}

Result<int64_t> sliding_window(const hf::ModelConfig& c) {
  OG_TRY(refuse_qwen_moe_sliding(c, "qwen3_moe"));
  return 0;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  OG_TRY(refuse_qwen_moe_sliding(c, "qwen3_moe"));
  OG_ASSIGN_OR_RETURN(QwenMoeConfig moe, read_qwen_moe_config(c, /*shared_expert=*/false));
  DecoderOptions o;
  o.qk_norm = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, c.text_fields().get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(c));
  o.mlp = qwen_moe_block(std::move(moe), o.activation);
  return build_decoder(ctx, o);
}

}  // namespace

const Family& qwen3_moe_family() {
  static constexpr ModelType kTypes[] = {{"qwen3_moe", false}};
  // transformers' Qwen3MoeConfig (head_dim absent there: hidden_size / heads, as modeling's
  // getattr fallback; rope_theta is the parser's own 10000 default, as the class has;
  // num_key_value_heads is 4, not num_attention_heads).
  // transformers 5 maps num_experts to num_local_experts and saves only the latter.
  static const Family f{.name = "qwen3_moe",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-6},
                                            {"sliding_window", 4096},
                                            {"intermediate_size", 6144},
                                            {"num_experts", 128},
                                            {"num_experts_per_tok", 8},
                                            {"moe_intermediate_size", 768},
                                            {"norm_topk_prob", false},
                                            {"decoder_sparse_step", 1},
                                            {"num_key_value_heads", 4}},
                        .config_aliases = {{"num_local_experts", "num_experts"}},
                        .default_layer_types = default_layer_types,
                        .sliding_window = sliding_window,
                        .build = build};
  return f;
}

}  // namespace og::exporter
