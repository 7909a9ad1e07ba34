// Multi-head latent attention (mla.h).
#include "export/families/mla.h"

#include <fmt/format.h>

#include <cmath>

#include "export/family.h"
#include "export/rope.h"

namespace og::exporter {

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
  // The cache's one head holds the latent and the rope part: the attention kernels take heads
  // of at most 1024 values (kernels::kMaxHeadDim), so wider latents are refused here, not at load.
  if (m.kv_lora + m.rope > 1024)
    return unsupported("{}: kv_lora_rank {} + qk_rope_head_dim {} = {}: the latent cache's head may hold at most 1024 values",
                       c.path, m.kv_lora, m.rope, m.kv_lora + m.rope);
  if (m.nope < 1) return t.invalid("qk_nope_head_dim", "a positive integer");
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
    const int64_t D = R + dr;  // the cache's one head: [ckv | k_pe]
    const std::string p = fmt::format("layers.{}.self_attn.", l);
    // Rows of a rope part in the rope kernel's rotate-half order (interleaved pairs or not).
    auto rope_rows = [&](WeightOptions o) {
      if (m.interleave) o.pairs_block = dr, o.pairs_width = dr;
      return o;
    };
    // q's input, and q's rows per head [nope | pe] taken apart.
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
    OG_ASSIGN_OR_RETURN(WeightId wq_nope, g.weight(*wq_t, {.row_begin = 0, .row_end = nh * dk, .row_step = dk, .row_run = dn}));
    OG_ASSIGN_OR_RETURN(WeightId wq_pe, g.weight(*wq_t, rope_rows({.row_begin = dn, .row_end = nh * dk, .row_step = dk, .row_run = dr})));
    const ValueId q_nope = g.linear(q_in, wq_nope);  // [T, nh * dn]
    ValueId q_pe = g.linear(q_in, wq_pe);            // [T, nh * dr]

    // The latent: ckv normed, and k_pe (one for all heads).
    OG_ASSIGN_OR_RETURN(const hf::TensorView* kva_t, ctx.tensor(p + "kv_a_proj_with_mqa.weight", {R + dr, H}));
    OG_ASSIGN_OR_RETURN(WeightId w_ckv, g.weight(*kva_t, {.row_begin = 0, .row_end = R}));
    OG_ASSIGN_OR_RETURN(WeightId w_kpe, g.weight(*kva_t, rope_rows({.row_begin = R, .row_end = R + dr})));
    OG_ASSIGN_OR_RETURN(WeightId wkvn, ctx.weight(p + "kv_a_layernorm.weight", {R}, {.keep_f32 = true}));
    const ValueId ckv = g.rms_norm(g.linear(h, w_ckv), wkvn, 1e-6f, static_cast<int32_t>(R));  // [T, R]
    ValueId k_pe = g.linear(h, w_kpe);                                                        // [T, dr]

    // kv_b_proj absorbed: q_nope_h meets ckv through W_UK_h (q_lat_h = W_UK_h^T q_nope_h), and
    // the attention's latent output goes up through W_UV_h.
    OG_ASSIGN_OR_RETURN(const hf::TensorView* kvb, ctx.tensor(p + "kv_b_proj.weight", {nh * (dn + dv), R}));
    OG_ASSIGN_OR_RETURN(WeightId w_uk, g.weight_made(kvb->name + "[made: per head k_nope rows, transposed]", {nh * R, dn}, [kvb, nh, dn, dv, R]() {
      std::vector<float> w(static_cast<size_t>(nh * R * dn));
      for (int64_t hd = 0; hd < nh; ++hd)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < dn; ++j)
            w[static_cast<size_t>((hd * R + r) * dn + j)] = static_cast<float>(kvb->get((hd * (dn + dv) + j) * R + r));
      return Result<std::vector<float>>(std::move(w));
    }));
    OG_ASSIGN_OR_RETURN(WeightId w_uv, g.weight(*kvb, {.row_begin = dn, .row_end = nh * (dn + dv), .row_step = dn + dv, .row_run = dv}));
    const ValueId q_lat = g.head_linear(q_nope, w_uk, static_cast<int32_t>(nh), static_cast<int32_t>(dn));  // [T, nh * R]

    OG_ASSIGN_OR_RETURN(RopeTable rope, rope_for_layer(c, "full_attention", dr));
    if (rope.rotary_dim != dr)
      return unsupported("{}: a partial rope on qk_rope_head_dim is not supported ({} of {} dims)", c.path, rope.rotary_dim, dr);
    // DeepseekV3Attention.scaling: (dn + dr)^-0.5, times mscale(factor, mscale_all_dim)^2 under YaRN.
    const double scale = 1.0 / std::sqrt(static_cast<double>(dk)) * rope.mscale_all_dim * rope.mscale_all_dim;
    OG_ASSIGN_OR_RETURN(RopeWeights tables, add_rope_tables(g, fmt::format("layers.{}.", l), rope));
    q_pe = g.rope(q_pe, tables, static_cast<int32_t>(nh), static_cast<int32_t>(dr), static_cast<int32_t>(dr), rope.attention_factor);
    k_pe = g.rope(k_pe, tables, 1, static_cast<int32_t>(dr), static_cast<int32_t>(dr), rope.attention_factor);
    const ValueId q = g.concat(q_lat, q_pe, static_cast<int32_t>(nh));  // [T, nh * D], per head [q_lat | q_pe]
    const ValueId k = g.concat(ckv, k_pe);                              // [T, D]
    const AttendSpec spec{.cache_id = ctx.layout.layer_to_cache[l],
                          .scale = static_cast<float>(scale),
                          .n_heads = static_cast<int32_t>(nh),
                          .n_kv_heads = 1,
                          .head_dim = static_cast<int32_t>(D)};
    // v is k: a head's output is [softmax-weighted ckv | k_pe], of which W_UV reads the ckv part.
    const ValueId a = g.attend(q, k, k, spec);  // [T, nh * D]
    const ValueId o = g.head_linear(a, w_uv, static_cast<int32_t>(nh), static_cast<int32_t>(D));  // [T, nh * dv]
    OG_ASSIGN_OR_RETURN(WeightId wo, ctx.weight(p + "o_proj.weight", {H, nh * dv}));
    return g.linear(o, wo);  // [T, H]
  };
}

Result<KvGeometry> mla_kv_geometry(const hf::ModelConfig& c, int64_t, const std::string&) {
  OG_ASSIGN_OR_RETURN(MlaConfig m, read_mla(c, MlaRopePairs::kFromConfig));
  return KvGeometry{.kv_heads = 1, .head_dim = m.kv_lora + m.rope, .value_is_key = true};
}

}  // namespace og::exporter
