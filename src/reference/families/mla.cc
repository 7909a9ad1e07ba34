// Multi-head latent attention and DeepSeek's mixtures (mla.h), step by step in float64.
#include "reference/families/mla.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "reference/blocks.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

double yarn_get_mscale(double scale, double mscale) { return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

}  // namespace

Result<std::vector<double>> mla_forward(const hf::ModelConfig& c, const hf::Checkpoint& ckpt, std::span<const int32_t> tokens,
                                        const MlaVariant& var) {
  OG_TRY(require_causal(c));
  const hf::JsonFields t = c.text_fields();
  const int64_t H = c.hidden_size, nh = c.num_attention_heads, V = c.vocab_size, T = static_cast<int64_t>(tokens.size());
  int64_t q_lora = 0;
  if (t.has("q_lora_rank") && !t.raw("q_lora_rank").is_null()) { OG_ASSIGN_OR_RETURN(q_lora, t.get_int("q_lora_rank")); }
  OG_ASSIGN_OR_RETURN(const int64_t R, t.get_int("kv_lora_rank"));
  OG_ASSIGN_OR_RETURN(const int64_t dn, t.get_int("qk_nope_head_dim"));
  OG_ASSIGN_OR_RETURN(const int64_t dr, t.get_int("qk_rope_head_dim"));
  OG_ASSIGN_OR_RETURN(const int64_t dv, t.get_int("v_head_dim"));
  bool interleave = true;  // DeepSeek-V2's complex-number rope: always pairs
  if (var.rope_interleave_field) { OG_ASSIGN_OR_RETURN(interleave, t.get_bool("rope_interleave", true)); }
  OG_ASSIGN_OR_RETURN(const bool attention_bias, t.get_bool("attention_bias", false));
  if (attention_bias) return unsupported("{}: field '{}' is true: the reference runs MLA without biases", c.path, t.field_name("attention_bias"));
  if (c.num_key_value_heads != nh) return t.invalid("num_key_value_heads", "num_attention_heads");
  // The mixture: the sigmoid router (DeepseekV3MoE, Glm4MoeLiteMoE) or DeepseekV2Moe's softmax,
  // on the layers from first_k_dense_replace on or mlp_layer_types' "sparse" ones.
  int64_t experts = 0, top_k = 0, inter = 0, n_shared = 0, n_group = 1, topk_group = 1;
  bool norm_topk_prob = true;
  double routed_scale = 1.0;
  OG_ASSIGN_OR_RETURN(experts, t.get_int("n_routed_experts"));
  OG_ASSIGN_OR_RETURN(top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(inter, t.get_int("moe_intermediate_size"));
  if (t.has("n_shared_experts")) { OG_ASSIGN_OR_RETURN(n_shared, t.get_int("n_shared_experts")); }
  OG_ASSIGN_OR_RETURN(routed_scale, t.get_double("routed_scaling_factor"));
  if (var.softmax_router) {
    OG_ASSIGN_OR_RETURN(const std::string method, t.get_string("topk_method", "greedy"));
    if (method == "group_limited_greedy") {
      OG_ASSIGN_OR_RETURN(n_group, t.get_int("n_group"));
      OG_ASSIGN_OR_RETURN(topk_group, t.get_int("topk_group"));
    } else if (method != "greedy") {
      return t.invalid("topk_method", "greedy or group_limited_greedy");
    }
    norm_topk_prob = false;  // DeepseekV2Moe never renormalizes
  } else {
    OG_ASSIGN_OR_RETURN(n_group, t.get_int("n_group"));
    OG_ASSIGN_OR_RETURN(topk_group, t.get_int("topk_group"));
    OG_ASSIGN_OR_RETURN(norm_topk_prob, t.get_bool("norm_topk_prob", true));
  }
  const int64_t L = c.num_hidden_layers;
  std::vector<bool> sparse(static_cast<size_t>(L), true);
  if (var.mlp_layer_types) {  // Glm4MoeLiteConfig: ["dense"] + ["sparse"] * (L - 1) unless given
    if (t.has("mlp_layer_types")) {
      OG_ASSIGN_OR_RETURN(const std::vector<std::string> types, t.get_string_list("mlp_layer_types"));
      if (static_cast<int64_t>(types.size()) != L) return t.invalid("mlp_layer_types", "one entry a layer");
      for (int64_t l = 0; l < L; ++l) sparse[static_cast<size_t>(l)] = types[static_cast<size_t>(l)] == "sparse";
    } else {
      sparse[0] = false;
    }
  } else {
    OG_ASSIGN_OR_RETURN(const int64_t first_dense, t.get_int("first_k_dense_replace", 0));
    for (int64_t l = 0; l < std::min(first_dense, L); ++l) sparse[static_cast<size_t>(l)] = false;
  }
  if (experts < 1 || top_k < 1 || top_k > experts) return t.invalid("num_experts_per_tok", "in [1, n_routed_experts]");
  if (n_group < 1 || experts % n_group != 0) return t.invalid("n_group", "a divisor of n_routed_experts");
  if (topk_group < 1 || topk_group > n_group) return t.invalid("topk_group", "in [1, n_group]");
  OG_ASSIGN_OR_RETURN(const std::string act_name, t.get_string("hidden_act", "silu"));
  OG_ASSIGN_OR_RETURN(Activation act, parse_activation(act_name, c.path + ": field '" + t.field_name("hidden_act") + "'"));

  // The rope over the dr dims, and the softmax scale.
  OG_ASSIGN_OR_RETURN(RopeSpec rope, parse_uniform_rope(c, 10000.0));
  OG_TRY(check_rope_width(rope, dr, c.path));
  const std::vector<double> inv_freq = rope_inv_freq(rope, dr);
  double scaling = 1.0 / std::sqrt(static_cast<double>(dn + dr));
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!t.has(key) || !t.raw(key).is_object()) continue;
    const hf::Json& r = t.raw(key);
    if (r.value("rope_type", r.value("type", std::string("default"))) == "default") break;
    const double all_dim = r.contains("mscale_all_dim") && r["mscale_all_dim"].is_number() ? r["mscale_all_dim"].get<double>() : 0.0;
    const double factor = r.contains("factor") && r["factor"].is_number() ? r["factor"].get<double>() : 1.0;
    if (all_dim != 0) scaling *= yarn_get_mscale(factor, all_dim) * yarn_get_mscale(factor, all_dim);
    break;
  }

  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, name, shape); };
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, tensor("model.embed_tokens.weight", {V, H}));
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, tokens));  // [T, H]
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string pre = "model.layers." + std::to_string(l) + ".", at = pre + "self_attn.";
    OG_ASSIGN_OR_RETURN(std::vector<double> ln1, vector_f64(ckpt, pre + "input_layernorm.weight", H));
    OG_ASSIGN_OR_RETURN(std::vector<double> ln2, vector_f64(ckpt, pre + "post_attention_layernorm.weight", H));
    const Mat h = rms_norm(x, ln1, c.rms_norm_eps, NormStyle::kWeight, H);
    Mat q;  // [T, nh * (dn + dr)]
    if (q_lora > 0) {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* qa, tensor(at + "q_a_proj.weight", {q_lora, H}));
      OG_ASSIGN_OR_RETURN(std::vector<double> qn, vector_f64(ckpt, at + "q_a_layernorm.weight", q_lora));
      OG_ASSIGN_OR_RETURN(const hf::TensorView* qb, tensor(at + "q_b_proj.weight", {nh * (dn + dr), q_lora}));
      q = linear(rms_norm(linear(h, *qa), qn, 1e-6, NormStyle::kWeight, q_lora), *qb);
    } else {
      OG_ASSIGN_OR_RETURN(const hf::TensorView* wq, tensor(at + "q_proj.weight", {nh * (dn + dr), H}));
      q = linear(h, *wq);
    }
    OG_ASSIGN_OR_RETURN(const hf::TensorView* kva, tensor(at + "kv_a_proj_with_mqa.weight", {R + dr, H}));
    OG_ASSIGN_OR_RETURN(std::vector<double> kvn, vector_f64(ckpt, at + "kv_a_layernorm.weight", R));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* kvb, tensor(at + "kv_b_proj.weight", {nh * (dn + dv), R}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* wo, tensor(at + "o_proj.weight", {H, nh * dv}));
    const Mat compressed = linear(h, *kva);  // [T, R + dr]
    Mat ckv(T, R), k_pe(T, dr), q_pe(T, nh * dr);
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t j = 0; j < R; ++j) ckv.at(i, j) = compressed.at(i, j);
      for (int64_t j = 0; j < dr; ++j) k_pe.at(i, j) = compressed.at(i, R + j);
      for (int64_t hd = 0; hd < nh; ++hd)
        for (int64_t j = 0; j < dr; ++j) q_pe.at(i, hd * dr + j) = q.at(i, hd * (dn + dr) + dn + j);
    }
    const Mat kv = linear(rms_norm(ckv, kvn, 1e-6, NormStyle::kWeight, R), *kvb);  // [T, nh * (dn + dv)]
    if (interleave) {
      apply_rope_pairs(q_pe, nh, dr, inv_freq, rope.attention_factor);
      apply_rope_pairs(k_pe, 1, dr, inv_freq, rope.attention_factor);
    } else {
      apply_rope(q_pe, nh, dr, inv_freq, rope.attention_factor);
      apply_rope(k_pe, 1, dr, inv_freq, rope.attention_factor);
    }
    Mat attn(T, nh * dv);
    for (int64_t hd = 0; hd < nh; ++hd)
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> s(static_cast<size_t>(i + 1));
        double top = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < dn; ++d) dot += q.at(i, hd * (dn + dr) + d) * kv.at(j, hd * (dn + dv) + d);
          for (int64_t d = 0; d < dr; ++d) dot += q_pe.at(i, hd * dr + d) * k_pe.at(j, d);
          s[static_cast<size_t>(j)] = dot * scaling;
          top = std::max(top, s[static_cast<size_t>(j)]);
        }
        double sum = 0;
        for (double& e : s) sum += e = std::exp(e - top);
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < dv; ++d) attn.at(i, hd * dv + d) += s[static_cast<size_t>(j)] / sum * kv.at(j, hd * (dn + dv) + dn + d);
      }
    add_inplace(x, linear(attn, *wo));

    const Mat h2 = rms_norm(x, ln2, c.rms_norm_eps, NormStyle::kWeight, H);
    const std::string mlp = pre + "mlp.";
    auto gated = [&](const std::string& m, int64_t I) -> Result<MlpWeights> {
      MlpWeights w{.intermediate = I, .act = act};
      OG_ASSIGN_OR_RETURN(w.gate, tensor(m + "gate_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(w.up, tensor(m + "up_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(w.down, tensor(m + "down_proj.weight", {H, I}));
      return w;
    };
    if (!sparse[static_cast<size_t>(l)]) {
      OG_ASSIGN_OR_RETURN(MlpWeights w, gated(mlp, c.intermediate_size[static_cast<size_t>(l)]));
      add_inplace(x, gated_mlp(h2, w));
      continue;
    }
    MoeWeights moe{.top_k = top_k, .normalize = norm_topk_prob};
    OG_ASSIGN_OR_RETURN(moe.router, tensor(mlp + "gate.weight", {experts, H}));
    for (int64_t e = 0; e < experts; ++e) {
      OG_ASSIGN_OR_RETURN(MlpWeights w, gated(mlp + "experts." + std::to_string(e) + ".", inter));
      moe.experts.push_back(w);
    }
    if (!var.softmax_router) {
      moe.sigmoid = true;
      OG_ASSIGN_OR_RETURN(moe.choice_bias, vector_f64(ckpt, mlp + "gate.e_score_correction_bias", experts));
    }
    moe.n_group = n_group, moe.topk_group = topk_group, moe.routed_scale = routed_scale;
    if (n_shared > 0) { OG_ASSIGN_OR_RETURN(moe.shared, gated(mlp + "shared_experts.", inter * n_shared)); }
    add_inplace(x, sparse_moe(h2, moe));
  }
  OG_ASSIGN_OR_RETURN(std::vector<double> final_norm, vector_f64(ckpt, "model.norm.weight", H));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ckpt, c, *embed, {"lm_head.weight"}));
  return linear(rms_norm(x, final_norm, c.rms_norm_eps, NormStyle::kWeight, H), *head).v;
}

Result<std::vector<int64_t>> mla_windows(const hf::ModelConfig& c) {
  return std::vector<int64_t>(static_cast<size_t>(c.num_hidden_layers), 0);
}

}  // namespace og::reference
