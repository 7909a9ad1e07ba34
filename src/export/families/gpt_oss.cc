// gpt-oss (model_type gpt_oss): a pre-norm decoder whose attention is Llama's with biases on
// q/k/v/o (attention_bias, true by default), a learned sink logit per query head
// (self_attn.sinks, program.fbs AttendAttrs.sinks), YaRN rope (GptOssConfig's default rope is
// yarn: factor 32, original 4096, beta 32/1, truncate false; rope_theta 1.5e5), and layers
// alternating sliding (window 128) / full from layer 0 when config.json has no layer_types.
// The MLP is a mixture of experts (router with bias, top-k then softmax, clamped SwiGLU
// experts, usually MXFP4 `_blocks`/`_scales` on the hub) that needs the MoE op: until it
// exists, export builds and checks the attention of layer 0 and then refuses, naming
// num_local_experts. Followed: transformers models/gpt_oss/{configuration,modeling}_gpt_oss.py.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

class GptOssFamily final : public Family {
 public:
  const char* name() const override { return "gpt_oss"; }
  std::span<const ModelType> model_types() const override {
    static constexpr ModelType kTypes[] = {{"gpt_oss", false}};
    return kTypes;
  }
  // transformers' GptOssConfig defaults. rope_parameters (when config.json has neither it nor
  // rope_scaling) is GptOssConfig.__post_init__'s yarn dict.
  const hf::Json& config_defaults() const override {
    static const hf::Json kDefaults = {
        {"num_hidden_layers", 36},     {"num_local_experts", 128},    {"vocab_size", 201088},
        {"hidden_size", 2880},         {"intermediate_size", 2880},   {"head_dim", 64},
        {"num_attention_heads", 64},   {"num_key_value_heads", 8},    {"sliding_window", 128},
        {"hidden_act", "silu"},        {"max_position_embeddings", 131072}, {"rms_norm_eps", 1e-5},
        {"rope_theta", 150000.0},      {"num_experts_per_tok", 4},    {"swiglu_alpha", 1.702},
        {"swiglu_limit", 7.0},         {"attention_bias", true}};
    return kDefaults;
  }
  // GptOssConfig: "sliding_attention" if (i + 1) % 2 else "full_attention".
  Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const override {
    std::vector<std::string> types;
    for (int64_t l = 0; l < c.num_hidden_layers; ++l)
      types.push_back((l + 1) % 2 != 0 ? "sliding_attention" : "full_attention");
    return types;
  }
  Status build(BuildContext& ctx) const override {
    const hf::ModelConfig& c = ctx.config;
    const hf::JsonFields t = c.text_fields();
    if (!t.has("rope_scaling") && !t.has("rope_parameters"))
      return unsupported("{}: gpt_oss config without 'rope_scaling' or 'rope_parameters': transformers then "
                         "applies GptOssConfig's default yarn rope, which offgraph does not fill in; write it "
                         "into config.json", c.path);
    DecoderOptions o;
    OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", true));
    o.o_bias = o.qkv_bias;
    o.attention_sinks = true;
    OG_ASSIGN_OR_RETURN(int64_t experts, t.get_int("num_local_experts"));
    OG_ASSIGN_OR_RETURN(int64_t top_k, t.get_int("num_experts_per_tok"));
    o.mlp = [experts, top_k](BuildContext& ctx, int64_t layer, ValueId) -> Result<ValueId> {
      const hf::JsonFields f = ctx.config.text_fields();
      return unsupported("{}: gpt_oss layer {}'s MLP is a mixture of {} experts, top {} ('{}', '{}'): offgraph has "
                         "no mixture-of-experts op yet (its attention with sinks, yarn rope and sliding layers "
                         "is implemented)",
                         ctx.config.path, layer, experts, top_k, f.field_name("num_local_experts"),
                         f.field_name("num_experts_per_tok"));
    };
    return build_decoder(ctx, o);
  }
};

}  // namespace

const Family& gpt_oss_family() {
  static const GptOssFamily f;
  return f;
}

}  // namespace og::exporter
