// gpt-oss (model_type gpt_oss): a pre-norm decoder whose attention is Llama's with biases on
// q/k/v/o (attention_bias, true by default), a learned sink logit per query head
// (self_attn.sinks, program.fbs AttendAttrs.sinks), YaRN rope (GptOssConfig's default rope is
// yarn: factor 32, original 4096, beta 32/1, truncate false; rope_theta 1.5e5), and layers
// alternating sliding (window 128) / full from layer 0 when config.json has no layer_types.
// The MLP of every layer is a mixture of experts (docs/moe_families.md §2): a router with a
// bias, top-k of the logits then a softmax over those k, and experts computing
//   a = W_gu x + b_gu (gate = a[0::2], up = a[1::2]), y = W_d clamped_swiglu(gate, up) + b_d
// with swiglu_alpha (1.702) and swiglu_limit (7.0). Experts come as MXFP4 `_blocks`/`_scales`
// ([E, out, in/32, 16], quantization_config.quant_method "mxfp4", as on the hub), decoded
// exactly at export, or without quantization_config as transformers' in-memory parameters
// gate_up_proj [E, H, 2I] and down_proj [E, I, H] (input-major, read transposed).
// Followed: transformers models/gpt_oss/{configuration,modeling,modular}_gpt_oss.py,
// integrations/mxfp4.py.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

struct ExpertsConfig {
  int64_t n_experts = 0, top_k = 0;
  float alpha = 1.702f, limit = 7.0f;
  bool mxfp4 = false;  // experts as `_blocks`/`_scales`; else the float fused parameters
};

Result<ExpertsConfig> read_experts_config(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  ExpertsConfig m;
  OG_ASSIGN_OR_RETURN(m.n_experts, t.get_int("num_local_experts"));
  OG_ASSIGN_OR_RETURN(m.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(double alpha, t.get_double("swiglu_alpha"));
  OG_ASSIGN_OR_RETURN(double limit, t.get_double("swiglu_limit"));
  if (m.n_experts < 1) return t.invalid("num_local_experts", "a positive integer");
  if (m.top_k < 1 || m.top_k > m.n_experts || m.top_k > 64)
    return t.invalid("num_experts_per_tok", fmt::format("between 1 and min(num_local_experts = {}, 64)", m.n_experts));
  if (!std::isfinite(alpha)) return t.invalid("swiglu_alpha", "a finite number");
  if (!std::isfinite(limit) || limit <= 0) return t.invalid("swiglu_limit", "a finite number > 0");
  m.alpha = static_cast<float>(alpha);
  m.limit = static_cast<float>(limit);
  if (t.has("quantization_config")) {
    OG_ASSIGN_OR_RETURN(const hf::JsonFields q, t.get_object("quantization_config"));
    OG_ASSIGN_OR_RETURN(std::string method, q.get_string("quant_method"));
    if (method != "mxfp4")
      return unsupported("{}: field '{}' is '{}': offgraph reads gpt_oss experts as mxfp4 or unquantized", c.path,
                         q.field_name("quant_method"), method);
    m.mxfp4 = true;
  }
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    if (m.mxfp4 && (c.intermediate_size[static_cast<size_t>(l)] % 32 != 0 || c.hidden_size % 32 != 0))
      return t.invalid(c.hidden_size % 32 != 0 ? "hidden_size" : "intermediate_size",
                       "a multiple of 32 (MXFP4 groups of 32 values)");
  return m;
}

// transformers' GptOssExperts.gate_up_proj_bias [E, 2I] interleaves gate (even) and up (odd)
// units as the matrix does: split into f32 [E, I] gate and up biases.
Result<std::pair<WeightId, WeightId>> split_gate_up_bias(BuildContext& ctx, const std::string& name, int64_t E,
                                                         int64_t I) {
  OG_ASSIGN_OR_RETURN(const hf::TensorView* b, ctx.tensor(name, {E, 2 * I}));
  std::vector<float> gate(static_cast<size_t>(E * I)), up(gate.size());  // [E, I] each
  for (int64_t e = 0; e < E; ++e)
    for (int64_t i = 0; i < I; ++i) {
      gate[static_cast<size_t>(e * I + i)] = static_cast<float>(b->get(e * 2 * I + 2 * i));
      up[static_cast<size_t>(e * I + i)] = static_cast<float>(b->get(e * 2 * I + 2 * i + 1));
    }
  ctx.g.mark_ignored(b->name);  // consumed here, through the two f32 weights
  OG_ASSIGN_OR_RETURN(WeightId g, ctx.g.weight_f32(b->name + "[:, 0::2]", gate, {E, I}));
  OG_ASSIGN_OR_RETURN(WeightId u, ctx.g.weight_f32(b->name + "[:, 1::2]", up, {E, I}));
  return std::pair{g, u};
}

// A U8 tensor (MXFP4 blocks or scales) of the given shape; the error names it.
Result<const hf::TensorView*> u8_tensor(const BuildContext& ctx, const std::string& name, std::vector<int64_t> shape) {
  OG_ASSIGN_OR_RETURN(const hf::TensorView* t, ctx.ckpt.get(ctx.prefix + name));
  if (t->shape != shape || t->dtype != DType::kU8)
    return bad_input("{}: tensor '{}' is {} {}; MXFP4 with this config implies U8 {}", t->file, t->name,
                     dtype_name(t->dtype), t->shape_str(), fmt::format("[{}]", fmt::join(shape, ", ")));
  return t;
}

Result<ValueId> experts_block(BuildContext& ctx, const ExpertsConfig& moe, int64_t layer, ValueId h) {
  const int64_t H = ctx.config.hidden_size, E = moe.n_experts;
  const int64_t I = ctx.config.intermediate_size[static_cast<size_t>(layer)];
  const std::string p = fmt::format("layers.{}.mlp.", layer);
  // The router stays f32 (exact for a bf16 checkpoint): its logits pick the experts.
  OG_ASSIGN_OR_RETURN(WeightId router, ctx.weight(p + "router.weight", {E, H}, {.keep_f32 = true}));
  OG_ASSIGN_OR_RETURN(WeightId router_bias, ctx.weight(p + "router.bias", {E}, {.keep_f32 = true}));
  MoeSpec spec{.top_k = static_cast<int32_t>(moe.top_k),
               .scoring = fb::RouterScoring::TopKSoftmax,  // a softmax over k already sums to 1
               .activation = fb::Activation::ClampedSwiglu,
               .swiglu_alpha = moe.alpha,
               .swiglu_limit = moe.limit};
  OG_ASSIGN_OR_RETURN(const auto gate_up_bias, split_gate_up_bias(ctx, p + "experts.gate_up_proj_bias", E, I));
  spec.gate_bias = gate_up_bias.first;
  spec.up_bias = gate_up_bias.second;
  OG_ASSIGN_OR_RETURN(spec.down_bias, ctx.weight(p + "experts.down_proj_bias", {E, H}, {.keep_f32 = true}));
  // Gate unit i is output row 2i of the fused matrix, up unit i row 2i + 1.
  auto gate_rows = [&](int64_t e) {
    return WeightOptions{.expert = e, .row_begin = 0, .row_end = 2 * I, .row_step = 2};
  };
  auto up_rows = [&](int64_t e) { return WeightOptions{.expert = e, .row_begin = 1, .row_end = 2 * I, .row_step = 2}; };
  for (int64_t e = 0; e < E; ++e) {
    WeightId wg, wu, wd;
    if (moe.mxfp4) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* gub,
                          u8_tensor(ctx, p + "experts.gate_up_proj_blocks", {E, 2 * I, H / 32, 16}));
      OG_ASSIGN_OR_RETURN(const hf::TensorView* gus,
                          u8_tensor(ctx, p + "experts.gate_up_proj_scales", {E, 2 * I, H / 32}));
      OG_ASSIGN_OR_RETURN(const hf::TensorView* db, u8_tensor(ctx, p + "experts.down_proj_blocks", {E, H, I / 32, 16}));
      OG_ASSIGN_OR_RETURN(const hf::TensorView* ds, u8_tensor(ctx, p + "experts.down_proj_scales", {E, H, I / 32}));
      OG_ASSIGN_OR_RETURN(wg, ctx.g.weight_mxfp4(*gub, *gus, gate_rows(e)));
      OG_ASSIGN_OR_RETURN(wu, ctx.g.weight_mxfp4(*gub, *gus, up_rows(e)));
      OG_ASSIGN_OR_RETURN(wd, ctx.g.weight_mxfp4(*db, *ds, {.expert = e}));
    } else {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* gu, ctx.tensor(p + "experts.gate_up_proj", {E, H, 2 * I}));
      OG_ASSIGN_OR_RETURN(const hf::TensorView* d, ctx.tensor(p + "experts.down_proj", {E, I, H}));
      WeightOptions g = gate_rows(e), u = up_rows(e);
      g.transpose = u.transpose = true;
      OG_ASSIGN_OR_RETURN(wg, ctx.g.weight(*gu, g));
      OG_ASSIGN_OR_RETURN(wu, ctx.g.weight(*gu, u));
      OG_ASSIGN_OR_RETURN(wd, ctx.g.weight(*d, {.expert = e, .transpose = true}));
    }
    spec.gate.push_back(wg);
    spec.up.push_back(wu);
    spec.down.push_back(wd);
  }
  const ValueId logits = ctx.g.router(h, router, router_bias);  // [T, E]
  return ctx.g.moe(h, logits, spec);                            // [T, H]
}

// GptOssConfig: "sliding_attention" if (i + 1) % 2 else "full_attention".
Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) {
  std::vector<std::string> types;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    types.push_back((l + 1) % 2 != 0 ? "sliding_attention" : "full_attention");
  return types;
}

Status build(BuildContext& ctx) {
  const hf::ModelConfig& c = ctx.config;
  const hf::JsonFields t = c.text_fields();
  if (!t.has("rope_scaling") && !t.has("rope_parameters"))
    return unsupported(
        "{}: gpt_oss config without 'rope_scaling' or 'rope_parameters': transformers then "
        "applies GptOssConfig's default yarn rope, which offgraph does not fill in; write it "
        "into config.json",
        c.path);
  DecoderOptions o;
  // GptOssConfig sets attention_bias = True whatever config.json says (its attention
  // always has q/k/v/o biases).
  o.qkv_bias = true;
  o.o_bias = o.qkv_bias;
  o.attention_sinks = true;
  OG_ASSIGN_OR_RETURN(const ExpertsConfig moe, read_experts_config(c));
  o.mlp = [moe](BuildContext& ctx, int64_t layer, ValueId h) -> Result<ValueId> {
    return experts_block(ctx, moe, layer, h);
  };
  return build_decoder(ctx, o);
}

}  // namespace

const Family& gpt_oss_family() {
  static constexpr ModelType kTypes[] = {{"gpt_oss", false}};
  // transformers' GptOssConfig defaults. rope_parameters (when config.json has neither it nor
  // rope_scaling) is GptOssConfig.__post_init__'s yarn dict.
  static const Family f{.name = "gpt_oss",
                        .model_types = kTypes,
                        .config_defaults = {{"num_hidden_layers", 36},
                                            {"num_local_experts", 128},
                                            {"vocab_size", 201088},
                                            {"hidden_size", 2880},
                                            {"intermediate_size", 2880},
                                            {"head_dim", 64},
                                            {"num_attention_heads", 64},
                                            {"num_key_value_heads", 8},
                                            {"sliding_window", 128},
                                            {"hidden_act", "silu"},
                                            {"max_position_embeddings", 131072},
                                            {"rms_norm_eps", 1e-5},
                                            {"rope_theta", 150000.0},
                                            {"num_experts_per_tok", 4},
                                            {"swiglu_alpha", 1.702},
                                            {"swiglu_limit", 7.0},
                                            {"attention_bias", true}},
                        .default_layer_types = default_layer_types,
                        .build = build};
  return f;
}

}  // namespace og::exporter
