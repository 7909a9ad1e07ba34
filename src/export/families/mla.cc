// Multi-head latent attention (mla.h).
#include "export/families/mla.h"

#include <fmt/format.h>

#include <cmath>

#include "export/family.h"
#include "export/rope.h"

namespace og::exporter {
namespace {

// Row j of a head's rotary part in the order the rope kernel rotates (rotate-half) from the
// checkpoint's: pairs (2i, 2i + 1) when rope_interleave.
int64_t rope_row(const MlaConfig& m, int64_t j) {
  if (!m.interleave) return j;
  const int64_t half = m.rope / 2;
  return j < half ? 2 * j : 2 * (j - half) + 1;
}

}  // namespace

Result<MlaConfig> read_mla(const hf::ModelConfig& c, MlaRopePairs pairs) {
  const hf::JsonFields t = c.text_fields();
  MlaConfig m;
  m.heads = c.num_attention_heads;
  if (t.has("q_lora_rank") && !t.raw("q_lora_rank").is_null()) { OG_ASSIGN_OR_RETURN(m.q_lora, t.get_int("q_lora_rank")); }
  OG_ASSIGN_OR_RETURN(m.kv_lora, t.get_int("kv_lora_rank"));
  OG_ASSIGN_OR_RETURN(m.nope, t.get_int("qk_nope_head_dim"));
  OG_ASSIGN_OR_RETURN(m.rope, t.get_int("qk_rope_head_dim"));
  OG_ASSIGN_OR_RETURN(m.v, t.get_int("v_head_dim"));
  if (pairs == MlaRopePairs::kFromConfig) { OG_ASSIGN_OR_RETURN(m.interleave, t.get_bool("rope_interleave", true)); }
  OG_ASSIGN_OR_RETURN(const bool bias, t.get_bool("attention_bias", false));
  if (bias)
    return unsupported("{}: field '{}' is true: offgraph runs multi-head latent attention without biases", c.path,
                       t.field_name("attention_bias"));
  if (t.has("q_lora_rank") && !t.raw("q_lora_rank").is_null() && m.q_lora < 1)
    return t.invalid("q_lora_rank", "a positive integer or null");
  if (m.kv_lora < 1) return t.invalid("kv_lora_rank", "a positive integer");
  if (m.nope < 0) return t.invalid("qk_nope_head_dim", "a non-negative integer");
  if (m.rope < 2 || m.rope % 2 != 0) return t.invalid("qk_rope_head_dim", "a positive even integer");
  if (m.v < 1 || m.v > m.qk()) return t.invalid("v_head_dim", fmt::format("in [1, qk_nope_head_dim + qk_rope_head_dim = {}]", m.qk()));
  if (c.num_key_value_heads != m.heads)
    return t.invalid("num_key_value_heads", fmt::format("num_attention_heads ({}): each head has its own k and v", m.heads));
  return m;
}

std::function<Result<ValueId>(BuildContext&, int64_t, ValueId)> mla_attention(MlaConfig m) {
  return [m](BuildContext& ctx, int64_t l, ValueId h) -> Result<ValueId> {
    GraphBuilder& g = ctx.g;
    const hf::ModelConfig& c = ctx.config;
    const int64_t H = c.hidden_size, nh = m.heads, dn = m.nope, dr = m.rope, dv = m.v, dk = m.qk(), R = m.kv_lora;
    const std::string p = fmt::format("layers.{}.self_attn.", l);
    // q: its input, and its rows per head reordered to [pe | nope].
    ValueId q_in = h;
    int64_t q_cols = H;
    std::string q_name = p + "q_proj.weight";
    if (m.q_lora > 0) {
      OG_ASSIGN_OR_RETURN(WeightId wa, ctx.weight(p + "q_a_proj.weight", {m.q_lora, H}));
      OG_ASSIGN_OR_RETURN(WeightId wn, ctx.weight(p + "q_a_layernorm.weight", {m.q_lora}, {.keep_f32 = true}));
      q_in = g.rms_norm(g.linear(h, wa), wn, 1e-6f, static_cast<int32_t>(m.q_lora));
      q_cols = m.q_lora;
      q_name = p + "q_b_proj.weight";
    }
    OG_ASSIGN_OR_RETURN(const hf::TensorView* wq_t, ctx.tensor(q_name, {nh * dk, q_cols}));
    g.mark_ignored(wq_t->name);
    OG_ASSIGN_OR_RETURN(WeightId wq, g.weight_made(wq_t->name + "[made: q, per head pe | nope]", {nh * dk, q_cols}, [m, wq_t, nh, dk, dr, q_cols]() {
      std::vector<float> w(static_cast<size_t>(nh * dk * q_cols));
      for (int64_t hd = 0; hd < nh; ++hd)
        for (int64_t j = 0; j < dk; ++j) {
          const int64_t src = hd * dk + (j < dr ? m.nope + rope_row(m, j) : j - dr);
          for (int64_t col = 0; col < q_cols; ++col)
            w[static_cast<size_t>((hd * dk + j) * q_cols + col)] = static_cast<float>(wq_t->get(src * q_cols + col));
        }
      return Result<std::vector<float>>(std::move(w));
    }));
    ValueId q = g.float_linear(q_in, wq);  // [T, nh * dk]

    // The latent: ckv normed, k_pe; k's input [k_pe | ckv].
    OG_ASSIGN_OR_RETURN(WeightId wkva, ctx.weight(p + "kv_a_proj_with_mqa.weight", {R + dr, H}));
    const ValueId kva = g.linear(h, wkva);  // [T, R + dr]
    OG_ASSIGN_OR_RETURN(WeightId wkvn, ctx.weight(p + "kv_a_layernorm.weight", {R}, {.keep_f32 = true}));
    const ValueId ckv = g.rms_norm(g.slice(kva, 0, static_cast<int32_t>(R)), wkvn, 1e-6f, static_cast<int32_t>(R));
    const ValueId k_in = g.concat(g.slice(kva, static_cast<int32_t>(R), static_cast<int32_t>(dr)), ckv);  // [T, dr + R]
    OG_ASSIGN_OR_RETURN(const hf::TensorView* kvb, ctx.tensor(p + "kv_b_proj.weight", {nh * (dn + dv), R}));
    g.mark_ignored(kvb->name);
    OG_ASSIGN_OR_RETURN(WeightId wk, g.weight_made(kvb->name + "[made: k, per head k_pe | k_nope]", {nh * dk, dr + R}, [m, kvb, nh, dn, dv, dk, dr, R]() {
      std::vector<float> w(static_cast<size_t>(nh * dk * (dr + R)), 0.0f);
      for (int64_t hd = 0; hd < nh; ++hd)
        for (int64_t j = 0; j < dk; ++j) {
          float* row = w.data() + (hd * dk + j) * (dr + R);
          if (j < dr) {
            row[rope_row(m, j)] = 1.0f;  // k_pe, the same for every head
            continue;
          }
          const int64_t src = hd * (dn + dv) + (j - dr);
          for (int64_t col = 0; col < R; ++col) row[dr + col] = static_cast<float>(kvb->get(src * R + col));
        }
      return Result<std::vector<float>>(std::move(w));
    }));
    ValueId k = g.float_linear(k_in, wk);  // [T, nh * dk]
    OG_ASSIGN_OR_RETURN(WeightId wv, g.weight_made(kvb->name + "[made: v, per head v | zeros]", {nh * dk, R}, [kvb, nh, dn, dv, dk, R]() {
      std::vector<float> w(static_cast<size_t>(nh * dk * R), 0.0f);
      for (int64_t hd = 0; hd < nh; ++hd)
        for (int64_t j = 0; j < dv; ++j) {
          const int64_t src = hd * (dn + dv) + dn + j;
          for (int64_t col = 0; col < R; ++col) w[static_cast<size_t>((hd * dk + j) * R + col)] = static_cast<float>(kvb->get(src * R + col));
        }
      return Result<std::vector<float>>(std::move(w));
    }));
    const ValueId v = g.float_linear(ckv, wv);  // [T, nh * dk], zeros after each head's dv values

    OG_ASSIGN_OR_RETURN(RopeTable rope, rope_for_layer(c, "full_attention", dr));
    if (rope.rotary_dim != dr)
      return unsupported("{}: a partial rope on qk_rope_head_dim is not supported ({} of {} dims)", c.path, rope.rotary_dim, dr);
    // DeepseekV3Attention.scaling: (dn + dr)^-0.5, times mscale(factor, mscale_all_dim)^2 under YaRN.
    const double scale = 1.0 / std::sqrt(static_cast<double>(dk)) * rope.mscale_all_dim * rope.mscale_all_dim;
    OG_ASSIGN_OR_RETURN(RopeWeights tables, add_rope_tables(g, fmt::format("layers.{}.", l), rope));
    q = g.rope(q, tables, static_cast<int32_t>(nh), static_cast<int32_t>(dk), static_cast<int32_t>(dr), rope.attention_factor);
    k = g.rope(k, tables, static_cast<int32_t>(nh), static_cast<int32_t>(dk), static_cast<int32_t>(dr), rope.attention_factor);
    const AttendSpec spec{.cache_id = ctx.layout.layer_to_cache[l],
                          .scale = static_cast<float>(scale),
                          .n_heads = static_cast<int32_t>(nh),
                          .n_kv_heads = static_cast<int32_t>(nh),
                          .head_dim = static_cast<int32_t>(dk)};
    const ValueId a = g.attend(q, k, v, spec);  // [T, nh * dk]

    OG_ASSIGN_OR_RETURN(const hf::TensorView* o_t, ctx.tensor(p + "o_proj.weight", {H, nh * dv}));
    g.mark_ignored(o_t->name);
    OG_ASSIGN_OR_RETURN(WeightId wo, g.weight_made(o_t->name + "[made: o, per head columns | zeros]", {H, nh * dk}, [o_t, H, nh, dv, dk]() {
      std::vector<float> w(static_cast<size_t>(H * nh * dk), 0.0f);
      for (int64_t r = 0; r < H; ++r)
        for (int64_t hd = 0; hd < nh; ++hd)
          for (int64_t j = 0; j < dv; ++j)
            w[static_cast<size_t>(r * nh * dk + hd * dk + j)] = static_cast<float>(o_t->get(r * nh * dv + hd * dv + j));
      return Result<std::vector<float>>(std::move(w));
    }));
    return g.float_linear(a, wo);  // [T, H]
  };
}

Result<KvGeometry> mla_kv_geometry(const hf::ModelConfig& c, int64_t, const std::string&) {
  OG_ASSIGN_OR_RETURN(MlaConfig m, read_mla(c, MlaRopePairs::kFromConfig));
  return KvGeometry{m.heads, m.qk()};
}

}  // namespace og::exporter
