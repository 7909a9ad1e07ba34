#include "export/decoder.h"

#include <charconv>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "base/check.h"
#include "base/half.h"
#include "export/rope.h"

namespace og::exporter {

Result<fb::Activation> activation_named(const hf::ModelConfig& c, const std::string& key, const std::string& act) {
  if (act == "silu" || act == "swish") return fb::Activation::Silu;
  if (act == "gelu_pytorch_tanh" || act == "gelu_new" || act == "gelu_fast") return fb::Activation::GeluTanh;
  if (act == "gelu") return fb::Activation::Gelu;  // transformers' GELUActivation: the exact erf form
  if (act == "relu2") return fb::Activation::Relu2;  // ReLUSquaredActivation
  return unsupported("{}: field '{}' is '{}': offgraph supports silu, gelu, gelu_pytorch_tanh (gelu_new, gelu_fast) and relu2", c.path,
                     c.text_fields().field_name(key), act);
}

Result<fb::Activation> activation_from_config(const hf::ModelConfig& c) {
  hf::JsonFields t = c.text_fields();
  const std::string key = t.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  OG_ASSIGN_OR_RETURN(std::string act, t.get_string(key, "silu"));
  return activation_named(c, key, act);
}

Status read_attention_and_mlp_biases(const hf::JsonFields& t, DecoderOptions& o, bool read_mlp_bias) {
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", false));
  o.o_bias = o.qkv_bias;
  if (read_mlp_bias) { OG_ASSIGN_OR_RETURN(o.mlp_bias, t.get_bool("mlp_bias", false)); }
  return Status::ok();
}

float round_to_dtype(double x, DType dtype) {
  switch (dtype) {
    case DType::kBF16: return bf16_to_float(float_to_bf16(static_cast<float>(x)));
    case DType::kF16: return fp16_to_float(float_to_fp16(static_cast<float>(x)));
    default: return static_cast<float>(x);
  }
}

Result<DType> loaded_weight_dtype(const hf::ModelConfig& c, DType checkpoint_dtype) {
  if (c.torch_dtype.empty() || c.torch_dtype == "auto") return checkpoint_dtype;
  if (c.torch_dtype == "bfloat16") return DType::kBF16;
  if (c.torch_dtype == "float16") return DType::kF16;
  if (c.torch_dtype == "float32") return DType::kF32;
  return unsupported("{}: torch_dtype '{}' is not supported (bfloat16, float16, float32)", c.path, c.torch_dtype);
}

Result<std::string> find_text_prefix(const hf::Checkpoint& ckpt) {
  for (const char* p : {"model.", "model.language_model.", "language_model.model.", ""})
    if (ckpt.find(std::string(p) + "embed_tokens.weight") != nullptr) return std::string(p);
  return bad_input("{}: no embed_tokens.weight under model., model.language_model. or language_model.model.",
                   ckpt.dir());
}

namespace {

Result<WeightId> optional_bias(const BuildContext& ctx, bool want, const std::string& name, int64_t n,
                               WeightOptions options = {}) {
  if (!want) {
    if (ctx.has(name))
      return unsupported("{}: checkpoint has '{}{}' but the config implies no bias (attention_bias / mlp_bias)",
                         ctx.config.path, ctx.prefix, name);
    return kNoWeight;
  }
  options.keep_f32 = true;
  return ctx.weight(name, {n}, options);
}

// A linear's weight as the checkpoint stores it: [out, in] as nn.Linear, or [in, out] where the
// family's linears are Conv1D (DecoderOptions::conv1d, read transposed).
std::vector<int64_t> stored_shape(const DecoderOptions& o, int64_t out, int64_t in) {
  return o.conv1d ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in};
}

// A linear's weight NAME, [out, in] once read.
Result<WeightId> linear_weight(const BuildContext& ctx, const DecoderOptions& o, const std::string& name, int64_t out,
                               int64_t in, WeightOptions options = {}) {
  options.transpose = o.conv1d;
  return ctx.weight(name, stored_shape(o, out, in), options);
}

// down(act(gate h) * up h) with the layer's mlp.* weights (prefix p), or the plain
// DOWN(act(UP h)): [T, H].
Result<ValueId> mlp_block(BuildContext& ctx, const DecoderOptions& o, const std::string& p, ValueId h, int64_t I) {
  GraphBuilder& g = ctx.g;
  const int64_t H = ctx.config.hidden_size;
  if (o.plain_mlp_up != nullptr && o.plain_mlp_down != nullptr) {
    const std::string up_name = p + "mlp." + o.plain_mlp_up, down_name = p + "mlp." + o.plain_mlp_down;
    OG_ASSIGN_OR_RETURN(WeightId wu, linear_weight(ctx, o, up_name + ".weight", I, H));
    OG_ASSIGN_OR_RETURN(WeightId bu, optional_bias(ctx, o.mlp_bias, up_name + ".bias", I));
    OG_ASSIGN_OR_RETURN(WeightId wd, linear_weight(ctx, o, down_name + ".weight", H, I));
    OG_ASSIGN_OR_RETURN(WeightId bd, optional_bias(ctx, o.mlp_bias, down_name + ".bias", H));
    const ValueId m = g.act(g.linear(h, wu, bu), o.activation);  // [T, I]
    return g.linear(m, wd, bd);
  }
  ValueId gate, up;  // [T, I] each
  if (o.fused_gate_up) {
    OG_ASSIGN_OR_RETURN(const hf::TensorView* gu, ctx.tensor(p + "mlp.gate_up_proj.weight", {2 * I, H}));
    OG_ASSIGN_OR_RETURN(WeightId wg, g.weight(*gu, {.row_begin = 0, .row_end = I}));
    OG_ASSIGN_OR_RETURN(WeightId wu, g.weight(*gu, {.row_begin = I, .row_end = 2 * I}));
    gate = g.linear(h, wg);
    up = g.linear(h, wu);
  } else {
    OG_ASSIGN_OR_RETURN(WeightId wg, linear_weight(ctx, o, p + "mlp.gate_proj.weight", I, H));
    OG_ASSIGN_OR_RETURN(WeightId bg, optional_bias(ctx, o.mlp_bias, p + "mlp.gate_proj.bias", I));
    OG_ASSIGN_OR_RETURN(WeightId wu, linear_weight(ctx, o, p + "mlp.up_proj.weight", I, H));
    OG_ASSIGN_OR_RETURN(WeightId bu, optional_bias(ctx, o.mlp_bias, p + "mlp.up_proj.bias", I));
    gate = g.linear(h, wg, bg);
    up = g.linear(h, wu, bu);
  }
  const ValueId m = g.act_mul(gate, up, o.activation);  // [T, I]
  OG_ASSIGN_OR_RETURN(WeightId wd, linear_weight(ctx, o, p + "mlp.down_proj.weight", H, I));
  OG_ASSIGN_OR_RETURN(WeightId bd, optional_bias(ctx, o.mlp_bias, p + "mlp.down_proj.bias", H));
  return g.linear(m, wd, bd);  // [T, H]
}

}  // namespace

Status build_decoder(BuildContext& ctx, const DecoderOptions& o) {
  const hf::ModelConfig& c = ctx.config;
  GraphBuilder& g = ctx.g;
  const int64_t H = c.hidden_size, V = c.vocab_size, Hq = c.num_attention_heads;
  const float eps = static_cast<float>(c.rms_norm_eps);
  OG_CHECK(o.skip_rope.empty() || static_cast<int64_t>(o.skip_rope.size()) == c.num_hidden_layers);
  OG_CHECK(!(o.mlp && o.sandwich_norms));  // the MLP hook replaces the feed-forward block without its norms
  OG_CHECK(!(o.sandwich_norms && o.post_norms_only));
  OG_CHECK(!o.qk_norm_whole || o.qk_norm);
  OG_CHECK(!(o.parallel && (o.sandwich_norms || o.post_norms_only || o.residual_scale != 1.0f || o.mlp)));
  OG_CHECK(!o.parallel_two_norms || o.parallel);
  OG_CHECK(!(o.fused_qkv_per_head && o.fused_qkv_grouped));
  OG_CHECK(!o.qk_norm_per_head || (o.qk_norm && o.layer_norm && !o.qk_norm_whole));
  // A LayerNorm per head whose weights are tensors of their own, NAME.LIST.{h}.weight [dim]:
  // gathered into one [groups * dim] f32 weight (the layer_norm op's per-group form); no bias
  // (a bias tensor, or a weight for a head beyond `groups`, stays unread and is refused).
  auto heads_list_norm = [&](ValueId x, const std::string& name, int64_t dim, int64_t groups,
                             const WeightOptions& wo) -> Result<ValueId> {
    OG_CHECK(wo.pairs_block == 0);  // the heads' rows are not permuted (no interleaved rope here)
    std::vector<float> w;  // [groups, dim]
    w.reserve(static_cast<size_t>(groups * dim));
    for (int64_t h = 0; h < groups; ++h) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* t, ctx.tensor(fmt::format("{}.{}.{}.weight", name, o.qk_norm_heads_list, h), {dim}));
      for (float v : hf::to_f32(*t)) w.push_back((v + wo.add) * wo.mul);
      g.mark_ignored(t->name);  // read here, into the gathered weight
    }
    OG_ASSIGN_OR_RETURN(WeightId wid, g.weight_f32(ctx.prefix + name + ".weight", w, {groups * dim}));
    return g.layer_norm(x, wid, kNoWeight, eps, static_cast<int32_t>(dim));
  };
  // rows of `dim` of x normed by NAME.weight (and NAME.bias for a LayerNorm with biases):
  // [T, width of x]; the weights [dim] (or [groups, dim], one per group, stored flat) kept f32,
  // their elements in `order`'s row order
  auto norm = [&](ValueId x, const std::string& name, int64_t dim, WeightOptions order = {},
                  int64_t groups = 0) -> Result<ValueId> {
    WeightOptions wo = order;
    wo.keep_f32 = true;
    wo.add = o.norm_offset;
    wo.flatten = groups > 0;
    const std::vector<int64_t> shape = groups > 0 ? std::vector<int64_t>{groups, dim} : std::vector<int64_t>{dim};
    if (groups > 0 && o.qk_norm_heads_list != nullptr) return heads_list_norm(x, name, dim, groups, wo);
    OG_ASSIGN_OR_RETURN(WeightId w, ctx.weight(name + ".weight", shape, wo));
    if (!o.layer_norm) return g.rms_norm(x, w, eps, static_cast<int32_t>(dim));
    WeightId b = kNoWeight;
    if (o.layer_norm_bias) {
      wo.add = 0;
      OG_ASSIGN_OR_RETURN(b, ctx.weight(name + ".bias", shape, wo));
    } else if (ctx.has(name + ".bias")) {
      return unsupported("{}: checkpoint has '{}{}.bias' but this family's LayerNorms have no bias", ctx.config.path,
                         ctx.prefix, name);
    }
    return g.layer_norm(x, w, b, eps, static_cast<int32_t>(dim));
  };

  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed_t, ctx.tensor(std::string(o.embed_name) + ".weight", {V, H}));
  OG_ASSIGN_OR_RETURN(WeightId embed, g.weight(*embed_t));
  ValueId x = g.embedding(embed, static_cast<int32_t>(H), o.embed_scale);  // [T, H]: the residual stream
  if (o.position_embed_name != nullptr) {
    const std::string name = std::string(o.position_embed_name) + ".weight";
    const hf::TensorView* pos_t = ctx.ckpt.find(ctx.prefix + name);
    if (pos_t == nullptr) return bad_input("{}: the checkpoint has no {}{}", ctx.ckpt.dir(), ctx.prefix, name);
    if (pos_t->shape.size() != 2 || pos_t->shape[1] != H)
      return bad_input("{}: tensor '{}' {}: expected [positions, {}]", pos_t->file, pos_t->name, pos_t->shape_str(), H);
    if (pos_t->shape[0] < ctx.max_ctx_len)
      return usage_error("{}: max_ctx_len {} exceeds the model's {} learned positions ({}); pass --max-ctx-len {} or less",
                         c.path, ctx.max_ctx_len, pos_t->shape[0], pos_t->name, pos_t->shape[0]);
    OG_ASSIGN_OR_RETURN(WeightId pos, g.weight(*pos_t));
    x = g.add(x, g.position_embedding(pos, static_cast<int32_t>(H)));  // inputs_embeds + position_embeds
  }

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerAttention& la = ctx.layers[l];
    const std::string p = std::string(o.layers_name) + "." + std::to_string(l) + ".";
    const int64_t D = la.head_dim, Hkv = la.kv_heads, I = c.intermediate_size[l];
    if (la.donor >= 0) return unsupported("{}: KV-shared layers are not supported by this family's builder", c.path);

    ValueId h = x;  // [T, H]: the attention's input
    if (!o.post_norms_only) { OG_ASSIGN_OR_RETURN(h, norm(x, p + o.input_norm_name, H)); }
    ValueId attn_out = kNoValue;  // [T, H]
    if (o.attention) {  // the family's own attention sublayer
      OG_ASSIGN_OR_RETURN(attn_out, o.attention(ctx, l, h));
    } else {
      // The rope fields are checked for every layer, including those that apply none.
      RopeTable rope;
      if (!o.no_rope) { OG_ASSIGN_OR_RETURN(rope, rope_for_layer(c, la.type, D, o.sliding_rope_theta)); }
      // q's and k's rows in the order the rope kernel rotates (DecoderOptions::rope_interleaved).
      const WeightOptions qk_rows = o.rope_interleaved ? WeightOptions{.pairs_block = D, .pairs_width = rope.rotary_dim}
                                                       : WeightOptions{};
      const std::string at = p + o.attention_name + ".";  // the attention module's tensors
      ValueId q, k, v;  // [T, Hq * D], [T, Hkv * D], [T, Hkv * D]
      if (o.fused_qkv) {
        // Rows of q, k and v in the fused matrix (and elements of its bias): one block after the
        // other, or interleaved per head (one run of D rows each every 3D rows).
        if (o.fused_qkv_per_head && Hkv != Hq)
          return unsupported("{}: a per-head fused query_key_value needs as many kv heads as heads ({} vs {})", c.path, Hkv, Hq);
        const int64_t per_kv = Hq / Hkv, group_rows = (per_kv + 2) * D;  // a kv group's q heads, k and v
        auto rows_of = [&](int64_t part) {  // part 0: q, 1: k, 2: v
          WeightOptions wo = part < 2 ? qk_rows : WeightOptions{};
          if (o.fused_qkv_per_head) {
            wo.row_begin = part * D, wo.row_end = 3 * Hq * D, wo.row_step = 3 * D, wo.row_run = D;
          } else if (o.fused_qkv_grouped) {
            wo.row_begin = part == 0 ? 0 : (per_kv + part - 1) * D, wo.row_end = Hkv * group_rows;
            wo.row_step = group_rows, wo.row_run = part == 0 ? per_kv * D : D;
          } else {
            wo.row_begin = part == 0 ? 0 : (Hq + (part - 1) * Hkv) * D;
            wo.row_end = wo.row_begin + (part == 0 ? Hq : Hkv) * D;
          }
          return wo;
        };
        const std::string fused = at + o.fused_qkv_name;
        const int64_t fused_rows = (Hq + 2 * Hkv) * D;
        OG_ASSIGN_OR_RETURN(const hf::TensorView* qkv, ctx.tensor(fused + ".weight", stored_shape(o, fused_rows, H)));
        const hf::TensorView* qkv_bias = nullptr;  // [(Hq + 2 Hkv) D]
        if (o.qkv_bias) { OG_ASSIGN_OR_RETURN(qkv_bias, ctx.tensor(fused + ".bias", {fused_rows})); }
        else if (ctx.has(fused + ".bias"))
          return unsupported("{}: checkpoint has '{}{}.bias' but the config implies no bias", c.path, ctx.prefix, fused);
        std::array<ValueId, 3> parts{};
        for (int64_t part = 0; part < 3; ++part) {
          WeightOptions wo = rows_of(part);
          wo.transpose = o.conv1d;
          OG_ASSIGN_OR_RETURN(WeightId w, g.weight(*qkv, wo));
          WeightId b = kNoWeight;
          if (qkv_bias != nullptr) {
            WeightOptions bo = rows_of(part);
            bo.keep_f32 = true;
            OG_ASSIGN_OR_RETURN(b, g.weight(*qkv_bias, bo));
          }
          parts[static_cast<size_t>(part)] = g.linear(h, w, b);
        }
        q = parts[0], k = parts[1], v = parts[2];
      } else {
        OG_ASSIGN_OR_RETURN(WeightId wq, linear_weight(ctx, o, at + "q_proj.weight", Hq * D, H, qk_rows));
        OG_ASSIGN_OR_RETURN(WeightId bq, optional_bias(ctx, o.qkv_bias, at + "q_proj.bias", Hq * D, qk_rows));
        OG_ASSIGN_OR_RETURN(WeightId wk, linear_weight(ctx, o, at + "k_proj.weight", Hkv * D, H, qk_rows));
        OG_ASSIGN_OR_RETURN(WeightId bk, optional_bias(ctx, o.qkv_bias, at + "k_proj.bias", Hkv * D, qk_rows));
        OG_ASSIGN_OR_RETURN(WeightId wv, linear_weight(ctx, o, at + "v_proj.weight", Hkv * D, H));
        OG_ASSIGN_OR_RETURN(WeightId bv, optional_bias(ctx, o.qkv_bias, at + "v_proj.bias", Hkv * D));
        q = g.linear(h, wq, bq);
        k = g.linear(h, wk, bk);
        v = g.linear(h, wv, bv);
      }
      auto qk_norms = [&]() -> Status {
        const int64_t q_groups = o.qk_norm_per_head ? Hq : 0, k_groups = o.qk_norm_per_head ? Hkv : 0;
        OG_ASSIGN_OR_RETURN(q, norm(q, at + o.q_norm_name, o.qk_norm_whole ? Hq * D : D, qk_rows, q_groups));
        OG_ASSIGN_OR_RETURN(k, norm(k, at + o.k_norm_name, o.qk_norm_whole ? Hkv * D : D, qk_rows, k_groups));
        return Status::ok();
      };
      if (o.qk_norm && !o.qk_norm_after_rope) OG_TRY(qk_norms());
      if (!o.no_rope && (o.skip_rope.empty() || !o.skip_rope[static_cast<size_t>(l)])) {
        OG_ASSIGN_OR_RETURN(RopeWeights tables, add_rope_tables(g, p, rope));  // [rotary_dim / 2]
        q = g.rope(q, tables, static_cast<int32_t>(Hq), static_cast<int32_t>(D), rope.rotary_dim,
                   rope.attention_factor);
        k = g.rope(k, tables, static_cast<int32_t>(Hkv), static_cast<int32_t>(D), rope.rotary_dim,
                   rope.attention_factor);
      }
      if (o.qk_norm && o.qk_norm_after_rope) OG_TRY(qk_norms());
      WeightId sinks = kNoWeight;  // [Hq]
      if (o.attention_sinks) { OG_ASSIGN_OR_RETURN(sinks, ctx.weight(at + "sinks", {Hq}, {.keep_f32 = true})); }
      double scale = o.attn_scale > 0 ? o.attn_scale : 1.0 / std::sqrt(static_cast<double>(D));
      if (o.attn_scale_by_inverse_layer) scale /= static_cast<double>(l + 1);
      AttendSpec spec{.cache_id = ctx.layout.layer_to_cache[l],
                      .scale = static_cast<float>(scale),
                      .softcap = o.attn_softcap,
                      .n_heads = static_cast<int32_t>(Hq),
                      .n_kv_heads = static_cast<int32_t>(Hkv),
                      .head_dim = static_cast<int32_t>(D),
                      .writes_cache = true,
                      .sinks = sinks};
      ValueId a = g.attend(q, k, v, spec);  // [T, Hq * D]
      const std::string o_proj = at + o.o_name;
      OG_ASSIGN_OR_RETURN(WeightId wo, linear_weight(ctx, o, o_proj + ".weight", H, Hq * D));
      OG_ASSIGN_OR_RETURN(WeightId bo, optional_bias(ctx, o.o_bias, o_proj + ".bias", H));
      attn_out = g.linear(a, wo, bo);
    }
    if (o.sandwich_norms || o.post_norms_only) {
      OG_ASSIGN_OR_RETURN(attn_out, norm(attn_out, p + o.post_attn_norm_name, H));
    }
    if (o.residual_scale != 1.0f) attn_out = g.scale(attn_out, o.residual_scale);
    if (o.parallel) {  // x + attn(h) + mlp(h), summed in transformers' order
      if (o.parallel_two_norms) { OG_ASSIGN_OR_RETURN(h, norm(x, p + o.ff_norm_name, H)); }
      OG_ASSIGN_OR_RETURN(ValueId m, mlp_block(ctx, o, p, h, I));
      x = g.add(g.add(attn_out, m), x);
      continue;
    }
    x = g.add(x, attn_out);

    h = x;  // [T, H]: the feed-forward block's input
    if (!o.post_norms_only) {
      OG_ASSIGN_OR_RETURN(h, norm(x, p + (o.sandwich_norms ? o.pre_ff_norm_name : o.ff_norm_name), H));
    }
    ValueId m = kNoValue;  // [T, H]
    if (o.mlp) { OG_ASSIGN_OR_RETURN(m, o.mlp(ctx, l, h)); }
    if (m == kNoValue) { OG_ASSIGN_OR_RETURN(m, mlp_block(ctx, o, p, h, I)); }
    if (o.sandwich_norms || o.post_norms_only) {
      OG_ASSIGN_OR_RETURN(m, norm(m, p + o.post_ff_norm_name, H));
    }
    if (o.residual_scale != 1.0f) m = g.scale(m, o.residual_scale);
    x = g.add(x, m);
  }
  OG_ASSIGN_OR_RETURN(x, norm(x, o.final_norm_name, H));  // [T, H]

  return build_lm_head(ctx, x, embed, o.final_softcap, o.logits_scale, o.lm_head_bias, o.head_name);
}

Status read_experts(BuildContext& ctx, const std::string& prefix, int64_t n, int64_t inter,
                    const std::array<const char*, 3>& names, MoeSpec& spec) {
  const int64_t H = ctx.config.hidden_size;
  for (int64_t e = 0; e < n; ++e) {
    const std::string ex = prefix + std::to_string(e) + ".";
    OG_ASSIGN_OR_RETURN(WeightId wg, ctx.weight(ex + names[0] + ".weight", {inter, H}));
    OG_ASSIGN_OR_RETURN(WeightId wu, ctx.weight(ex + names[1] + ".weight", {inter, H}));
    OG_ASSIGN_OR_RETURN(WeightId wd, ctx.weight(ex + names[2] + ".weight", {H, inter}));
    spec.gate.push_back(wg);
    spec.up.push_back(wu);
    spec.down.push_back(wd);
  }
  return Status::ok();
}

Status refuse_fused_experts(const BuildContext& ctx, const std::string& prefix) {
  if (!ctx.has(prefix + "experts.gate_up_proj")) return Status::ok();
  return unsupported("{}: '{}{}experts.gate_up_proj' is transformers' in-memory fused layout; offgraph reads "
                     "checkpoints with one tensor per expert ({}experts.N.gate_proj.weight)",
                     ctx.ckpt.dir(), ctx.prefix, prefix, prefix);
}

Status read_shared_expert(BuildContext& ctx, const std::string& prefix, int64_t inter, MoeSpec& spec) {
  const int64_t H = ctx.config.hidden_size;
  OG_ASSIGN_OR_RETURN(spec.shared_gate, ctx.weight(prefix + "gate_proj.weight", {inter, H}));
  OG_ASSIGN_OR_RETURN(spec.shared_up, ctx.weight(prefix + "up_proj.weight", {inter, H}));
  OG_ASSIGN_OR_RETURN(spec.shared_down, ctx.weight(prefix + "down_proj.weight", {H, inter}));
  return Status::ok();
}

Status build_lm_head(BuildContext& ctx, ValueId x, WeightId embed, float final_softcap, float logits_scale,
                     bool head_bias, const std::string& head_name) {
  const hf::ModelConfig& c = ctx.config;
  WeightId head = embed;
  const hf::TensorView* lm = ctx.ckpt.find(head_name + ".weight");
  if (lm == nullptr) lm = ctx.ckpt.find("language_model." + head_name + ".weight");
  if (!c.tie_word_embeddings) {
    if (lm == nullptr)
      return bad_input("{}: tie_word_embeddings is false but the checkpoint has no {}.weight", ctx.ckpt.dir(), head_name);
    OG_ASSIGN_OR_RETURN(const hf::TensorView* lm_checked, ctx.ckpt.get(lm->name, {c.vocab_size, c.hidden_size}));
    OG_ASSIGN_OR_RETURN(head, ctx.g.weight(*lm_checked));
  }
  WeightId bias = kNoWeight;  // [V]
  if (head_bias) {
    const std::string name = lm != nullptr ? lm->name.substr(0, lm->name.size() - 6) + "bias" : head_name + ".bias";
    const hf::TensorView* b = ctx.ckpt.find(name);
    if (b == nullptr) return bad_input("{}: the config implies a biased head but the checkpoint has no {}", ctx.ckpt.dir(), name);
    OG_ASSIGN_OR_RETURN(const hf::TensorView* b_checked, ctx.ckpt.get(name, {c.vocab_size}));
    OG_ASSIGN_OR_RETURN(bias, ctx.g.weight(*b_checked, {.keep_f32 = true}));
  }
  ValueId logits = ctx.g.lm_head(x, head, bias);  // [T, V]
  if (logits_scale != 1.0f) logits = ctx.g.scale(logits, logits_scale);
  if (final_softcap > 0) logits = ctx.g.softcap(logits, final_softcap);
  ctx.g.set_logits(logits);
  return Status::ok();
}

void skip_layers_past_last(BuildContext& ctx, int64_t n) {
  const int64_t L = ctx.config.num_hidden_layers;
  const std::string layers = ctx.prefix + "layers.";
  for (const std::string& name : ctx.ckpt.names()) {
    if (!name.starts_with(layers)) continue;
    int64_t layer = -1;
    const char* begin = name.data() + layers.size();
    const auto [end, ec] = std::from_chars(begin, name.data() + name.size(), layer);
    if (ec == std::errc() && *end == '.' && layer >= L && layer < L + n) ctx.g.mark_ignored(name);
  }
}

}  // namespace og::exporter
