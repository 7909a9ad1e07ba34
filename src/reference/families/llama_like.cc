// Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Qwen3, Qwen3-MoE, OLMoE, Granite (MoE), Phi3 and SmolLM3: pre-norm decoders with
// llama-style RMSNorm (w * x̂), a gated MLP, scale head_dim^-0.5 and no embedding scale.
// transformers generates them from the same modules (modular_mistral/qwen2/qwen3/phi3/smollm3
// inherit Llama's, Mistral's and Qwen2's), so one decoder with per-family switches mirrors
// how they relate. Qwen3-MoE is Qwen3's attention with a sparse mixture-of-experts block
// (blocks.h sparse_moe) on the layers its config makes sparse. Followed:
// models/{llama,mistral,qwen2,qwen3,qwen3_moe,olmoe,phi3,smollm3}/modeling_*.py + configuration_*.py,
// masking_utils.py.
#include <algorithm>
#include <cmath>
#include <string>

#include "reference/blocks.h"
#include "reference/families/families.h"
#include "reference/families/llama_like.h"
#include "reference/rope.h"
#include "reference/weights.h"

namespace og::reference {
namespace {

// SmolLM3Config.no_rope_layers: entry l is 1 when layer l applies RoPE (SmolLM3Attention's
// `if self.use_rope`), 0 for a NoPE layer; the list may be longer than the model. When it is
// absent or null the config class builds it as int((l + 1) % no_rope_layer_interval != 0).
Result<std::vector<bool>> rope_per_layer(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  const int64_t L = c.num_hidden_layers;
  std::vector<bool> rope;
  if (!t.has("no_rope_layers")) {
    OG_ASSIGN_OR_RETURN(int64_t interval, t.get_int("no_rope_layer_interval"));
    if (interval < 1) return t.invalid("no_rope_layer_interval", "an integer >= 1");
    for (int64_t l = 0; l < L; ++l) rope.push_back((l + 1) % interval != 0);
    return rope;
  }
  const hf::Json& list = t.raw("no_rope_layers");
  if (!list.is_array() || static_cast<int64_t>(list.size()) < L)
    return t.invalid("no_rope_layers", "a list of 0/1 flags with an entry for each of the " + std::to_string(L) + " layers");
  for (int64_t l = 0; l < L; ++l) {
    const hf::Json& flag = list[static_cast<size_t>(l)];
    if (!flag.is_number_integer() || !(flag.get<int64_t>() == 0 || flag.get<int64_t>() == 1))
      return unsupported("{}: field '{}[{}]' is {}: the reference reads 1 (RoPE) or 0 (NoPE)", c.path,
                         t.field_name("no_rope_layers"), l, flag.dump());
    rope.push_back(flag.get<int64_t>() == 1);
  }
  return rope;
}

Result<std::vector<int64_t>> windows_for(const Variant& var, const hf::ModelConfig& c) {
  const int64_t L = c.num_hidden_layers;
  const hf::JsonFields t = c.text_fields();
  OG_ASSIGN_OR_RETURN(std::vector<bool> given, sliding_flags_from_layer_types(c));  // empty: absent
  std::vector<int64_t> windows(static_cast<size_t>(L), 0);
  if (var.sliding == SlidingRule::kQwen) {
    // Qwen2Config/Qwen3Config: sliding_window is dropped unless use_sliding_window.
    OG_ASSIGN_OR_RETURN(bool use, t.get_bool("use_sliding_window", false));
    OG_ASSIGN_OR_RETURN(int64_t max_window_layers, t.get_int("max_window_layers", 28));
    const int64_t window = use ? c.sliding_window.value_or(0) : 0;  // 0: none
    for (int64_t i = 0; i < L; ++i) {
      const bool sliding = given.empty() ? window > 0 && i >= max_window_layers : given[static_cast<size_t>(i)];
      if (!sliding) continue;
      if (window == 0)
        return unsupported("{}: '{}[{}]' is sliding_attention but there is no window to apply "
                           "(sliding_window is null or use_sliding_window is false)",
                           c.path, t.field_name("layer_types"), i);
      windows[static_cast<size_t>(i)] = window;
    }
    return windows;
  }
  if (var.sliding == SlidingRule::kSmolLM3) {
    // SmolLM3Config builds layer_types (when absent) as sliding iff use_sliding_window,
    // sliding_window not None and not no_rope_layers[l]. SmolLM3Attention passes the window
    // on only with use_sliding_window, while the sliding mask (masking_utils) ignores it.
    OG_ASSIGN_OR_RETURN(bool use, t.get_bool("use_sliding_window", false));
    OG_ASSIGN_OR_RETURN(std::vector<bool> rope, rope_per_layer(c));
    for (int64_t i = 0; i < L; ++i) {
      const size_t li = static_cast<size_t>(i);
      const bool sliding = given.empty() ? use && c.sliding_window.has_value() && !rope[li] : given[li];
      if (!sliding) continue;
      if (!use)
        return unsupported("{}: '{}[{}]' is sliding_attention while '{}' is false: transformers' attention "
                           "implementations disagree on whether it slides",
                           c.path, t.field_name("layer_types"), i, t.field_name("use_sliding_window"));
      if (!c.sliding_window)
        return unsupported("{}: '{}[{}]' is sliding_attention but '{}' is null", c.path, t.field_name("layer_types"),
                           i, t.field_name("sliding_window"));
      windows[li] = *c.sliding_window;
    }
    return windows;
  }
  if (var.sliding == SlidingRule::kExaone4) {
    // Exaone4Config builds layer_types (when absent) from an integer sliding_window_pattern:
    // layer i slides iff (i + 1) % pattern != 0; none without a sliding_window.
    const bool string_pattern = t.has("sliding_window_pattern") && t.raw("sliding_window_pattern").is_string();
    if (given.empty() && c.sliding_window.has_value() && string_pattern)
      return unsupported("{}: a string sliding_window_pattern without layer_types", c.path);
    int64_t pattern = 0;
    if (given.empty() && c.sliding_window.has_value()) { OG_ASSIGN_OR_RETURN(pattern, t.get_int("sliding_window_pattern", 4)); }
    for (int64_t i = 0; i < L; ++i) {
      const size_t li = static_cast<size_t>(i);
      if (!(given.empty() ? pattern > 0 && (i + 1) % pattern != 0 : given[li])) continue;
      if (!c.sliding_window || *c.sliding_window <= 0)
        return unsupported("{}: layer {} is sliding_attention but '{}' is null", c.path, i, t.field_name("sliding_window"));
      windows[li] = *c.sliding_window;
    }
    return windows;
  }
  if (var.sliding == SlidingRule::kDots1) {
    // Dots1Config builds layer_types (when absent) as sliding iff sliding_window is not None
    // and i >= max_window_layers (no use_sliding_window); Qwen3Attention then slides them.
    OG_ASSIGN_OR_RETURN(int64_t max_window_layers, t.get_int("max_window_layers", 62));
    for (int64_t i = 0; i < L; ++i) {
      const size_t li = static_cast<size_t>(i);
      if (!(given.empty() ? c.sliding_window.has_value() && i >= max_window_layers : given[li])) continue;
      if (!c.sliding_window || *c.sliding_window <= 0)
        return unsupported("{}: layer {} is sliding_attention but '{}' is null", c.path, i, t.field_name("sliding_window"));
      windows[li] = *c.sliding_window;
    }
    return windows;
  }
  if (var.sliding == SlidingRule::kOlmo3) {
    // Olmo3Config builds layer_types (when absent) with every fourth layer full; sliding
    // layers take sliding_window (its class default 4096).
    for (int64_t i = 0; i < L; ++i) {
      const size_t li = static_cast<size_t>(i);
      if (!(given.empty() ? (i + 1) % 4 != 0 : given[li])) continue;
      if (!c.sliding_window || *c.sliding_window <= 0)
        return unsupported("{}: layer {} is sliding_attention but '{}' is null", c.path, i, t.field_name("sliding_window"));
      windows[li] = *c.sliding_window;
    }
    return windows;
  }
  // Llama never windows; Mistral and Phi3 window every layer when sliding_window is set and
  // ignore layer_types, so a layer_types that says otherwise cannot be honoured.
  const int64_t window = var.sliding == SlidingRule::kEveryLayer ? c.sliding_window.value_or(0) : 0;
  for (int64_t i = 0; i < L; ++i) {
    if (!given.empty() && given[static_cast<size_t>(i)] != (window > 0))
      return unsupported("{}: '{}[{}]' = '{}' disagrees with what transformers applies to {} "
                         "(sliding window {} on every layer)",
                         c.path, t.field_name("layer_types"), i, c.layer_types[static_cast<size_t>(i)],
                         var.family, window > 0 ? std::to_string(window) : "none");
    windows[static_cast<size_t>(i)] = window;
  }
  return windows;
}

void scale_inplace(Mat& m, double s) {
  if (s != 1)
    for (double& v : m.v) v *= s;
}

// Everything a forward pass needs from config.json, resolved with the family's defaults.
struct Plan {
  int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  double eps = 1e-6;
  bool qkv_bias = false;  // q, k, v only
  bool attention_bias = false, mlp_bias = false;
  bool out_bias = false;  // o_proj alone (attention_bias also biases it)
  Activation act = Activation::kSilu;
  std::vector<int64_t> windows;
  std::vector<double> inv_freq;
  std::vector<double> long_inv_freq;  // longrope: positions >= long_from use these
  int64_t long_from = 0;
  double rope_attention_factor = 1.0;  // yarn, longrope: cos and sin times this
  // olmo3's sliding layers' rope (the fields above are the full layers'): the default one
  // unless rope_parameters' sliding_attention entry says otherwise.
  std::vector<double> sliding_inv_freq;
  double sliding_attention_factor = 1.0;
  std::vector<bool> rope;  // per layer: applies RoPE (false: SmolLM3's NoPE layers)
  // GraniteConfig's multipliers (1 for the other families; attention_scale 0: head_dim^-0.5).
  double embedding_multiplier = 1, attention_scale = 0, residual_multiplier = 1, logits_scaling = 1;
  // Mixture of experts (Qwen3MoeConfig, Qwen2MoeConfig): a layer is sparse iff it is not in
  // mlp_only_layers, num_experts > 0 and (layer + 1) % decoder_sparse_step == 0. MixtralConfig:
  // every layer (sparse_step 1, no mlp_only_layers), always renormalized.
  int64_t experts = 0, top_k = 0, moe_intermediate = 0, sparse_step = 1;
  int64_t shared_intermediate = 0;  // qwen2_moe's shared expert
  bool norm_topk_prob = false;
  // glm4_moe's sigmoid router: its expert groups and the routed experts' factor.
  int64_t n_group = 1, topk_group = 1;
  double routed_scale = 1.0;
  double norm_min = 0;  // ernie4_5_moe: the renormalization's floor (moe_norm_min)
  bool qk_norm = false;  // the variant's, or use_qk_norm
  std::vector<int64_t> mlp_only_layers;
  bool sparse(int64_t layer) const {
    return experts > 0 && (layer + 1) % sparse_step == 0 &&
           std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) == mlp_only_layers.end();
  }
};

// The mixture-of-experts fields of the variant's config class.
Status read_moe(const Variant& var, const hf::ModelConfig& c, Plan& p) {
  const hf::JsonFields t = c.text_fields();
  if (var.moe == MoeKind::kErnie45Moe) {
    // Ernie4_5_MoeConfig: moe_layer_end_index -1 is the last layer; layer l is sparse iff
    // (l + 1) % moe_layer_interval == 0 and start <= l <= end (the others are mlp_only_layers here).
    int64_t n_shared = 0, start = 0, end = 0, interval = 1;
    for (const char* key : {"moe_layer_start_index", "moe_layer_end_index"})
      if (t.has(key) && !t.raw(key).is_number_integer())
        return unsupported("{}: field '{}' is not an integer: the reference reads the text model's one bound", c.path,
                           t.field_name(key));
    OG_ASSIGN_OR_RETURN(p.experts, t.get_int("moe_num_experts"));
    OG_ASSIGN_OR_RETURN(p.top_k, t.get_int("moe_k"));
    OG_ASSIGN_OR_RETURN(p.moe_intermediate, t.get_int("moe_intermediate_size"));
    OG_ASSIGN_OR_RETURN(n_shared, t.get_int("moe_num_shared_experts"));
    OG_ASSIGN_OR_RETURN(start, t.get_int("moe_layer_start_index"));
    OG_ASSIGN_OR_RETURN(end, t.get_int("moe_layer_end_index"));
    OG_ASSIGN_OR_RETURN(interval, t.get_int("moe_layer_interval"));
    OG_ASSIGN_OR_RETURN(p.norm_min, t.get_double("moe_norm_min"));
    if (end == -1) end = c.num_hidden_layers - 1;
    if (p.experts < 1) return t.invalid("moe_num_experts", "positive");
    if (p.top_k < 1 || p.top_k > p.experts) return t.invalid("moe_k", "in [1, moe_num_experts]");
    if (n_shared < 0) return t.invalid("moe_num_shared_experts", "non-negative");
    if (interval < 1) return t.invalid("moe_layer_interval", "positive");
    OG_ASSIGN_OR_RETURN(const bool bias, t.get_bool("use_bias", false));
    if (bias) return unsupported("{}: field '{}' is true: the reference runs ERNIE 4.5 MoE without biases", c.path, t.field_name("use_bias"));
    p.norm_topk_prob = true;
    p.shared_intermediate = p.moe_intermediate * n_shared;
    for (int64_t l = 0; l < c.num_hidden_layers; ++l)
      if (!((l + 1) % interval == 0 && l >= start && l <= end)) p.mlp_only_layers.push_back(l);
    return Status::ok();
  }
  if (var.moe == MoeKind::kGlm4Moe) {
    // Glm4MoeConfig: layers from first_k_dense_replace on are sparse (the dense ones are
    // mlp_only_layers here), every sparse one with a shared expert n_shared_experts wide.
    int64_t n_shared = 0, first_dense = 0;
    OG_ASSIGN_OR_RETURN(p.experts, t.get_int("n_routed_experts"));
    OG_ASSIGN_OR_RETURN(p.top_k, t.get_int("num_experts_per_tok"));
    OG_ASSIGN_OR_RETURN(p.moe_intermediate, t.get_int("moe_intermediate_size"));
    OG_ASSIGN_OR_RETURN(n_shared, t.get_int("n_shared_experts"));
    OG_ASSIGN_OR_RETURN(first_dense, t.get_int("first_k_dense_replace"));
    OG_ASSIGN_OR_RETURN(p.norm_topk_prob, t.get_bool("norm_topk_prob", true));
    OG_ASSIGN_OR_RETURN(p.n_group, t.get_int("n_group"));
    OG_ASSIGN_OR_RETURN(p.topk_group, t.get_int("topk_group"));
    OG_ASSIGN_OR_RETURN(p.routed_scale, t.get_double("routed_scaling_factor"));
    if (p.experts < 1) return t.invalid("n_routed_experts", "positive");
    if (p.top_k < 1 || p.top_k > p.experts) return t.invalid("num_experts_per_tok", "in [1, n_routed_experts]");
    if (n_shared < 0) return t.invalid("n_shared_experts", "non-negative");
    // topk(2) within each group: a group needs two experts.
    if (p.n_group < 1 || p.experts % p.n_group != 0 || p.experts / p.n_group < 2)
      return t.invalid("n_group", "a divisor of n_routed_experts with at least 2 experts a group");
    if (p.topk_group < 1 || p.topk_group > p.n_group) return t.invalid("topk_group", "in [1, n_group]");
    p.shared_intermediate = p.moe_intermediate * n_shared;
    for (int64_t l = 0; l < std::min(first_dense, c.num_hidden_layers); ++l) p.mlp_only_layers.push_back(l);
    return Status::ok();
  }
  if (var.moe == MoeKind::kMixtral || var.moe == MoeKind::kGraniteMoe || var.moe == MoeKind::kOlmoe ||
      var.moe == MoeKind::kMiniMaxM2) {
    // Every layer sparse, the experts intermediate_size wide, num_experts_per_tok of them.
    // MixtralConfig and GraniteMoeConfig count them in num_local_experts (Mixtral's num_experts
    // is its alias) and always renormalize: MixtralSparseMoeBlock does, and JetMoeTopKGating's
    // softmax over the k largest logits is the softmax over all renormalized over the k (the
    // same k: softmax is monotonic). OlmoeConfig counts them in num_experts (num_local_experts
    // its alias) and renormalizes iff norm_topk_prob.
    const bool olmoe = var.moe == MoeKind::kOlmoe;
    const std::string count = olmoe ? "num_experts" : "num_local_experts";
    OG_ASSIGN_OR_RETURN(p.experts, t.get_int(count));
    OG_ASSIGN_OR_RETURN(p.top_k, t.get_int("num_experts_per_tok"));
    p.moe_intermediate = c.intermediate_size[0];
    p.norm_topk_prob = true;
    if (olmoe) { OG_ASSIGN_OR_RETURN(p.norm_topk_prob, t.get_bool("norm_topk_prob", false)); }
    if (p.experts < 1) return t.invalid(count, "positive");
    if (p.top_k < 1 || p.top_k > p.experts) return t.invalid("num_experts_per_tok", "in [1, " + count + "]");
    if (var.shared_mlp) {  // GraniteMoeSharedConfig: 0 is no shared expert
      OG_ASSIGN_OR_RETURN(p.shared_intermediate, t.get_int("shared_intermediate_size", 0));
      if (p.shared_intermediate < 0) return t.invalid("shared_intermediate_size", "non-negative");
    }
    if (olmoe && t.has("clip_qkv"))
      return unsupported("{}: field '{}' is set: the reference does not clip q/k/v", c.path, t.field_name("clip_qkv"));
    return Status::ok();
  }
  // Qwen3MoeConfig / Qwen2MoeConfig. use_sliding_window is refused: transformers 4.5x
  // slid the layers from max_window_layers on, later versions every layer, so no one answer is
  // transformers'.
  {
    OG_ASSIGN_OR_RETURN(bool sliding, t.get_bool("use_sliding_window", false));
    if (sliding)
      return unsupported("{}: field '{}' is true: the reference does not run {} with a sliding window", c.path,
                         t.field_name("use_sliding_window"), var.family);
  }
  OG_ASSIGN_OR_RETURN(p.experts, t.get_int("num_experts"));
  OG_ASSIGN_OR_RETURN(p.top_k, t.get_int("num_experts_per_tok"));
  OG_ASSIGN_OR_RETURN(p.moe_intermediate, t.get_int("moe_intermediate_size"));
  OG_ASSIGN_OR_RETURN(p.sparse_step, t.get_int("decoder_sparse_step"));
  OG_ASSIGN_OR_RETURN(p.norm_topk_prob, t.get_bool("norm_topk_prob", false));
  if (t.has("mlp_only_layers")) { OG_ASSIGN_OR_RETURN(p.mlp_only_layers, t.get_int_list("mlp_only_layers")); }
  if (var.moe == MoeKind::kQwen2) {
    OG_ASSIGN_OR_RETURN(p.shared_intermediate, t.get_int("shared_expert_intermediate_size"));
    if (p.shared_intermediate < 1) return t.invalid("shared_expert_intermediate_size", "positive");
  }
  if (p.experts > 0 && (p.top_k < 1 || p.top_k > p.experts)) return t.invalid("num_experts_per_tok", "in [1, num_experts]");
  if (p.sparse_step < 1) return t.invalid("decoder_sparse_step", "positive");
  return Status::ok();
}

Result<Plan> make_plan(const Variant& var, const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  OG_TRY(require_causal(c));
  Plan p;
  p.hidden = c.hidden_size;
  p.heads = c.num_attention_heads;
  p.kv_heads = c.num_key_value_heads;
  p.vocab = c.vocab_size;
  p.head_dim = c.head_dim;
  p.eps = c.rms_norm_eps;
  if (var.reads_attention_bias) {
    OG_ASSIGN_OR_RETURN(p.attention_bias, t.get_bool("attention_bias", false));
  }
  p.qkv_bias = var.qkv_bias;
  if (var.reads_use_bias) {
    OG_ASSIGN_OR_RETURN(p.attention_bias, t.get_bool("use_bias", false));
    p.mlp_bias = p.attention_bias;
  }
  if (var.reads_attention_bias_qkv_only) {
    OG_ASSIGN_OR_RETURN(p.qkv_bias, t.get_bool("attention_bias", true));
  }
  if (var.reads_qkv_bias) {
    OG_ASSIGN_OR_RETURN(p.qkv_bias, t.get_bool("qkv_bias", true));
  }
  if (var.reads_mlp_bias) {
    OG_ASSIGN_OR_RETURN(p.mlp_bias, t.get_bool("mlp_bias", false));
  }
  if (var.reads_attention_out_bias) {
    OG_ASSIGN_OR_RETURN(p.qkv_bias, t.get_bool("attention_bias", true));
    OG_ASSIGN_OR_RETURN(p.out_bias, t.get_bool("attention_out_bias", false));
  }
  OG_ASSIGN_OR_RETURN(std::string act, t.get_string("hidden_act", "silu"));
  if (var.xielu_mlp) {
    if (act != "xielu") return unsupported("{}: hidden_act '{}': the reference runs {} with xielu only", c.path, act, var.family);
  } else {
  OG_ASSIGN_OR_RETURN(p.act, parse_activation(act, c.path + ": field '" + t.field_name("hidden_act") + "'"));
  }
  OG_ASSIGN_OR_RETURN(p.windows, windows_for(var, c));
  if (var.moe != MoeKind::kNone) OG_TRY(read_moe(var, c, p));
  p.qk_norm = var.qk_norm;
  if (var.reads_use_qk_norm) { OG_ASSIGN_OR_RETURN(p.qk_norm, t.get_bool("use_qk_norm", false)); }
  if (var.multipliers) {
    for (auto [key, field] : {std::pair{"embedding_multiplier", &p.embedding_multiplier},
                              std::pair{"attention_multiplier", &p.attention_scale},
                              std::pair{"residual_multiplier", &p.residual_multiplier},
                              std::pair{"logits_scaling", &p.logits_scaling}}) {
      OG_ASSIGN_OR_RETURN(*field, t.get_double(key, 1.0));
      if (!(*field > 0) || !std::isfinite(*field)) return t.invalid(key, "a positive number");
    }
  }

  RopeSpec rope;
  if (var.rope_by_layer_type) {
    // Olmo3: {full: the configured rope, sliding: default}, both of base rope_theta (the
    // family's table fills it when absent), rope_scaling merged into the full entry only.
    OG_ASSIGN_OR_RETURN(double theta, t.get_double("rope_theta"));
    OG_ASSIGN_OR_RETURN(LayerTypeRopes by_type, rope_params_by_layer_type(c));
    const hf::JsonFields full(by_type.full, c.path, t.field_name("rope_parameters.full_attention."));
    const hf::JsonFields sliding(by_type.sliding, c.path, t.field_name("rope_parameters.sliding_attention."));
    OG_ASSIGN_OR_RETURN(rope, parse_rope_params(&full, theta, c.max_position_embeddings));
    OG_ASSIGN_OR_RETURN(RopeSpec local, parse_rope_params(&sliding, theta, c.max_position_embeddings));
    if (local.type == "longrope")
      return unsupported("{}: the sliding layers' rope type 'longrope' is not supported for {}", c.path, var.family);
    OG_TRY(check_rope_width(local, p.head_dim, c.path));
    p.sliding_inv_freq = rope_inv_freq(local, p.head_dim);
    p.sliding_attention_factor = local.attention_factor;
  } else {
    OG_ASSIGN_OR_RETURN(rope, parse_uniform_rope(c, 10000.0));
  }
  if (var.default_rope_only && rope.type != "default" && rope.type != "longrope")
    return unsupported("{}: rope type '{}' is not supported for {} (Phi3Config accepts only default and longrope)",
                       c.path, rope.type, var.family);
  OG_ASSIGN_OR_RETURN(double partial, parse_partial_rotary_factor(c));
  if (partial != 1.0 && !var.partial_rotary)
    return unsupported("{}: field '{}' = {} is not supported for {} (its attention rotates the whole head)",
                       c.path, t.field_name("partial_rotary_factor"), partial, var.family);
  // transformers: dim = int(head_dim * partial_rotary_factor); the rest of the head passes through.
  const int64_t rotary_dim = static_cast<int64_t>(static_cast<double>(p.head_dim) * partial);
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    return unsupported("{}: rotary width int(head_dim {} * partial_rotary_factor {}) = {} is not positive and even",
                       c.path, p.head_dim, partial, rotary_dim);
  OG_TRY(check_rope_width(rope, rotary_dim, c.path));
  p.inv_freq = rope_inv_freq(rope, rotary_dim);
  p.long_inv_freq = rope_long_inv_freq(rope, rotary_dim);
  if (var.rope_pairs && !p.long_inv_freq.empty())
    return unsupported("{}: rope type '{}' is not supported for {}", c.path, rope.type, var.family);
  p.long_from = static_cast<int64_t>(rope.original_max_position_embeddings);
  p.rope_attention_factor = rope.attention_factor;
  if (var.nope_full_if_sliding) {  // Exaone4Attention: "global NoPE for hybrid attention model"
    p.rope.assign(static_cast<size_t>(c.num_hidden_layers), true);
    if (c.sliding_window.has_value())
      for (int64_t i = 0; i < c.num_hidden_layers; ++i) p.rope[static_cast<size_t>(i)] = p.windows[static_cast<size_t>(i)] > 0;
  } else if (var.nope_layers) {
    OG_ASSIGN_OR_RETURN(p.rope, rope_per_layer(c));
  } else {
    p.rope.assign(static_cast<size_t>(c.num_hidden_layers), true);
  }
  return p;
}

// Layer `pre`'s sparse block: its router, experts and (qwen2_moe) shared expert.
Result<MoeWeights> moe_weights(const Variant& var, const Plan& p, const hf::Checkpoint& ckpt, const std::string& pre,
                               int64_t H) {
  const bool mixtral = var.moe == MoeKind::kMixtral || var.moe == MoeKind::kMiniMaxM2;
  const std::string block = pre + (mixtral ? "block_sparse_moe." : "mlp.");
  // MixtralBlockSparseTop2MLP: w1 gate, w3 up, w2 down.
  const char* names[3] = {"gate_proj", "up_proj", "down_proj"};
  if (mixtral) names[0] = "w1", names[1] = "w3", names[2] = "w2";
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, name, shape); };
  auto mlp = [&](const std::string& m, int64_t I) -> Result<MlpWeights> {
    MlpWeights w{.intermediate = I, .act = p.act};
    OG_ASSIGN_OR_RETURN(w.gate, tensor(m + names[0] + ".weight", {I, H}));
    OG_ASSIGN_OR_RETURN(w.up, tensor(m + names[1] + ".weight", {I, H}));
    OG_ASSIGN_OR_RETURN(w.down, tensor(m + names[2] + ".weight", {H, I}));
    return w;
  };
  MoeWeights moe{.top_k = p.top_k, .normalize = p.norm_topk_prob};
  if (var.moe == MoeKind::kGraniteMoe) {  // each expert's matrices are slices of the fused tensors
    const int64_t E = p.experts, I = p.moe_intermediate;
    const std::string gb = pre + "block_sparse_moe.";
    OG_ASSIGN_OR_RETURN(moe.router, tensor(gb + "router.layer.weight", {E, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* in, tensor(gb + "input_linear.weight", {E, 2 * I, H}));
    OG_ASSIGN_OR_RETURN(const hf::TensorView* out, tensor(gb + "output_linear.weight", {E, H, I}));
    moe.slices = std::make_shared<std::deque<hf::TensorView>>();
    const auto slice = [&](const hf::TensorView& t, int64_t e) -> const hf::TensorView* {
      const size_t bytes = t.nbytes / static_cast<size_t>(t.shape[0]);
      // (Named as the whole tensor: what options keyed by checkpoint tensor name look up.)
      moe.slices->push_back({.name = t.name, .dtype = t.dtype, .shape = {t.shape[1], t.shape[2]},
                             .data = t.data + static_cast<size_t>(e) * bytes, .nbytes = bytes, .file = t.file});
      return &moe.slices->back();
    };
    for (int64_t e = 0; e < E; ++e)  // gate rows, then up rows: MlpWeights' gate_up
      moe.experts.push_back({.gate_up = slice(*in, e), .down = slice(*out, e), .intermediate = I, .act = p.act});
    if (p.shared_intermediate > 0) {  // GraniteMoeSharedMLP: ungated, on every token
      const int64_t S = p.shared_intermediate;
      MlpWeights shared{.intermediate = S, .act = p.act};
      OG_ASSIGN_OR_RETURN(shared.gate_up, tensor(pre + "shared_mlp.input_linear.weight", {2 * S, H}));
      OG_ASSIGN_OR_RETURN(shared.down, tensor(pre + "shared_mlp.output_linear.weight", {H, S}));
      moe.shared = shared;
    }
    return moe;
  }
  OG_ASSIGN_OR_RETURN(moe.router, tensor(block + "gate.weight", {p.experts, H}));
  for (int64_t e = 0; e < p.experts; ++e) {
    OG_ASSIGN_OR_RETURN(MlpWeights ew, mlp(block + "experts." + std::to_string(e) + ".", p.moe_intermediate));
    moe.experts.push_back(ew);
  }
  if (var.moe == MoeKind::kErnie45Moe) {  // Ernie4_5_MoeStatics' bias [1, E]; shared_experts ungated
    OG_ASSIGN_OR_RETURN(const hf::TensorView* statics, tensor(block + "moe_statics.e_score_correction_bias", {1, p.experts}));
    moe.choice_bias = hf::to_f64(*statics);
    moe.norm_min = p.norm_min;
    if (p.shared_intermediate > 0) { OG_ASSIGN_OR_RETURN(moe.shared, mlp(block + "shared_experts.", p.shared_intermediate)); }
  }
  if (var.moe == MoeKind::kGlm4Moe) {  // Glm4MoeTopkRouter; shared_experts ungated
    moe.sigmoid = true;
    OG_ASSIGN_OR_RETURN(moe.choice_bias, vector_f64(ckpt, block + "gate.e_score_correction_bias", p.experts));
    moe.n_group = p.n_group;
    moe.topk_group = p.topk_group;
    moe.routed_scale = p.routed_scale;
    if (p.shared_intermediate > 0) { OG_ASSIGN_OR_RETURN(moe.shared, mlp(block + "shared_experts.", p.shared_intermediate)); }
  }
  if (var.moe == MoeKind::kMiniMaxM2) {  // MiniMaxM2TopKRouter: one group, no scale, no shared expert
    moe.sigmoid = true;
    OG_ASSIGN_OR_RETURN(moe.choice_bias, vector_f64(ckpt, block + "e_score_correction_bias", p.experts));
  }
  if (var.moe == MoeKind::kQwen2) {
    OG_ASSIGN_OR_RETURN(moe.shared, mlp(block + "shared_expert.", p.shared_intermediate));
    OG_ASSIGN_OR_RETURN(moe.shared_gate, tensor(block + "shared_expert_gate.weight", {1, H}));
  }
  return moe;
}

Result<std::vector<double>> run(const Variant& var, const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                std::span<const int32_t> tokens) {
  OG_ASSIGN_OR_RETURN(Plan p, make_plan(var, c));
  const int64_t H = p.hidden, D = p.head_dim;
  OG_ASSIGN_OR_RETURN(const hf::TensorView* embed, float_tensor(ckpt, "model.embed_tokens.weight", {p.vocab, H}));
  OG_ASSIGN_OR_RETURN(Mat x, embed_rows(*embed, tokens));  // [T, H] residual stream
  scale_inplace(x, p.embedding_multiplier);
  // A sublayer's output joins the residual stream, times residual_multiplier.
  auto join = [&](Mat branch) {
    scale_inplace(branch, p.residual_multiplier);
    add_inplace(x, branch);
  };

  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string pre = "model.layers." + std::to_string(i) + ".";
    const std::string at = pre + "self_attn.", mlp = pre + "mlp.";
    const int64_t I = c.intermediate_size[static_cast<size_t>(i)];
    auto tensor = [&](const std::string& name, std::vector<int64_t> shape) { return float_tensor(ckpt, name, shape); };

    AttentionWeights aw;
    if (var.fused) {
      OG_ASSIGN_OR_RETURN(aw.qkv, tensor(at + "qkv_proj.weight", {(p.heads + 2 * p.kv_heads) * D, H}));
    } else {
      OG_ASSIGN_OR_RETURN(aw.q, tensor(at + "q_proj.weight", {p.heads * D, H}));
      OG_ASSIGN_OR_RETURN(aw.k, tensor(at + "k_proj.weight", {p.kv_heads * D, H}));
      OG_ASSIGN_OR_RETURN(aw.v, tensor(at + "v_proj.weight", {p.kv_heads * D, H}));
    }
    if (p.qkv_bias || p.attention_bias) {
      OG_ASSIGN_OR_RETURN(aw.q_bias, tensor(at + "q_proj.bias", {p.heads * D}));
      OG_ASSIGN_OR_RETURN(aw.k_bias, tensor(at + "k_proj.bias", {p.kv_heads * D}));
      OG_ASSIGN_OR_RETURN(aw.v_bias, tensor(at + "v_proj.bias", {p.kv_heads * D}));
    }
    OG_ASSIGN_OR_RETURN(aw.o, tensor(at + "o_proj.weight", {H, p.heads * D}));
    if (p.attention_bias || p.out_bias) {
      OG_ASSIGN_OR_RETURN(aw.o_bias, tensor(at + "o_proj.bias", {H}));
    }
    if (p.qk_norm || var.post_norms || var.qk_norm_whole) {
      aw.qk_norm_whole = (var.post_norms && !var.post_norms_head_qk) || var.qk_norm_whole;
      const std::string qn = var.qk_norm_after_rope ? "query_layernorm" : "q_norm",
                        kn = var.qk_norm_after_rope ? "key_layernorm" : "k_norm";
      OG_ASSIGN_OR_RETURN(aw.q_norm, vector_f64(ckpt, at + qn + ".weight", aw.qk_norm_whole ? p.heads * D : D));
      OG_ASSIGN_OR_RETURN(aw.k_norm, vector_f64(ckpt, at + kn + ".weight", aw.qk_norm_whole ? p.kv_heads * D : D));
      aw.qk_norm_style = NormStyle::kWeight;
      aw.qk_norm_eps = p.eps;
      aw.qk_norm_after_rope = var.qk_norm_after_rope;
    }
    AttentionShape shape{.attn = {.n_heads = p.heads, .n_kv_heads = p.kv_heads, .head_dim = D,
                                  .scale = p.attention_scale > 0 ? p.attention_scale : 1.0 / std::sqrt(static_cast<double>(D)),
                                  .softcap = 0,
                                  .window = p.windows[static_cast<size_t>(i)]},
                         .inv_freq = p.rope[static_cast<size_t>(i)] ? p.inv_freq : std::vector<double>{},
                         .rope_attention_factor = p.rope_attention_factor,
                         .long_inv_freq = p.rope[static_cast<size_t>(i)] ? p.long_inv_freq : std::vector<double>{},
                         .long_from = p.long_from,
                         .rope_pairs = var.rope_pairs};
    if (var.rope_by_layer_type && p.windows[static_cast<size_t>(i)] > 0) {  // a sliding layer's own rope
      shape.inv_freq = p.sliding_inv_freq;
      shape.rope_attention_factor = p.sliding_attention_factor;
      shape.long_inv_freq.clear();
    }

    if (var.post_norms) {  // olmo2: x += norm(attention(x)); x += norm(mlp(x))
      OG_ASSIGN_OR_RETURN(std::vector<double> post_attn, vector_f64(ckpt, pre + "post_attention_layernorm.weight", H));
      OG_ASSIGN_OR_RETURN(std::vector<double> post_ff, vector_f64(ckpt, pre + "post_feedforward_layernorm.weight", H));
      MlpWeights mw{.intermediate = I, .act = p.act};
      OG_ASSIGN_OR_RETURN(mw.gate, tensor(mlp + "gate_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(mw.up, tensor(mlp + "up_proj.weight", {I, H}));
      OG_ASSIGN_OR_RETURN(mw.down, tensor(mlp + "down_proj.weight", {H, I}));
      join(rms_norm(self_attention(x, aw, shape), post_attn, p.eps, NormStyle::kWeight, H));
      join(rms_norm(gated_mlp(x, mw), post_ff, p.eps, NormStyle::kWeight, H));
      continue;
    }
    OG_ASSIGN_OR_RETURN(std::vector<double> ln1, vector_f64(ckpt, pre + var.input_norm + ".weight", H));
    OG_ASSIGN_OR_RETURN(std::vector<double> ln2, vector_f64(ckpt, pre + var.ff_norm + ".weight", H));
    if (var.moe != MoeKind::kNone && p.sparse(i)) {
      OG_ASSIGN_OR_RETURN(MoeWeights moe, moe_weights(var, p, ckpt, pre, H));
      join(self_attention(rms_norm(x, ln1, p.eps, NormStyle::kWeight, H), aw, shape));
      join(sparse_moe(rms_norm(x, ln2, p.eps, NormStyle::kWeight, H), moe));
      continue;
    }
    MlpWeights mw{.intermediate = I, .act = p.act};
    if (var.fused || var.fused_gate_up) {
      OG_ASSIGN_OR_RETURN(mw.gate_up, tensor(mlp + "gate_up_proj.weight", {2 * I, H}));
    } else {
      if (!var.plain_mlp) { OG_ASSIGN_OR_RETURN(mw.gate, tensor(mlp + "gate_proj.weight", {I, H})); }
      OG_ASSIGN_OR_RETURN(mw.up, tensor(mlp + "up_proj.weight", {I, H}));
    }
    OG_ASSIGN_OR_RETURN(mw.down, tensor(mlp + "down_proj.weight", {H, I}));
    if (var.xielu_mlp) {  // apertus: XIELUActivation's four scalars
      const char* names[4] = {"alpha_p", "alpha_n", "beta", "eps"};
      for (size_t k = 0; k < 4; ++k) {
        OG_ASSIGN_OR_RETURN(const hf::TensorView* s, tensor(mlp + "act_fn." + names[k], k < 2 ? std::vector<int64_t>{1} : std::vector<int64_t>{}));
        mw.xielu[k] = s->get(0);
      }
      mw.has_xielu = true;
    }
    if (p.mlp_bias) {
      if (!var.plain_mlp) { OG_ASSIGN_OR_RETURN(mw.gate_bias, tensor(mlp + "gate_proj.bias", {I})); }
      OG_ASSIGN_OR_RETURN(mw.up_bias, tensor(mlp + "up_proj.bias", {I}));
      OG_ASSIGN_OR_RETURN(mw.down_bias, tensor(mlp + "down_proj.bias", {H}));
    }
    // arcee: NemotronMLP, down(act(up x)); the others gated.
    auto feed_forward = [&](const Mat& h) { return var.plain_mlp ? plain_mlp(h, mw) : gated_mlp(h, mw); };

    if (var.glm4_norms) {
      OG_ASSIGN_OR_RETURN(std::vector<double> post_attn, vector_f64(ckpt, pre + "post_self_attn_layernorm.weight", H));
      OG_ASSIGN_OR_RETURN(std::vector<double> post_mlp, vector_f64(ckpt, pre + "post_mlp_layernorm.weight", H));
      join(rms_norm(self_attention(rms_norm(x, ln1, p.eps, NormStyle::kWeight, H), aw, shape), post_attn, p.eps,
                    NormStyle::kWeight, H));
      join(rms_norm(feed_forward(rms_norm(x, ln2, p.eps, NormStyle::kWeight, H)), post_mlp, p.eps, NormStyle::kWeight, H));
      continue;
    }
    join(self_attention(rms_norm(x, ln1, p.eps, NormStyle::kWeight, H), aw, shape));
    join(feed_forward(rms_norm(x, ln2, p.eps, NormStyle::kWeight, H)));
  }

  OG_ASSIGN_OR_RETURN(std::vector<double> final_norm, vector_f64(ckpt, "model.norm.weight", H));
  OG_ASSIGN_OR_RETURN(const hf::TensorView* head, output_head(ckpt, c, *embed, {"lm_head.weight"}));
  Mat logits = linear(rms_norm(x, final_norm, p.eps, NormStyle::kWeight, H), *head);  // [T, V]
  if (p.logits_scaling != 1) scale_inplace(logits, 1.0 / p.logits_scaling);
  return logits.v;
}

}  // namespace

Result<std::vector<double>> llama_like_forward(const Variant& variant, const hf::ModelConfig& c, const hf::Checkpoint& ckpt,
                                               std::span<const int32_t> tokens) {
  return run(variant, c, ckpt, tokens);
}

Result<std::vector<int64_t>> llama_like_windows(const Variant& variant, const hf::ModelConfig& c) {
  return windows_for(variant, c);
}

}  // namespace og::reference
