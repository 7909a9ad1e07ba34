// HunYuan dense (model_type hunyuan_v1_dense; Hunyuan-0.5B, -1.8B, -4B, -7B): transformers'
// HunYuanDenseV1ForCausalLM. Llama's decoder whose attention norms each head of q and k after
// the rotation (query_layernorm / key_layernorm, RMSNorms over head_dim); rope_scaling
// "dynamic" with an alpha is its DynamicNTKAlphaRotary, a fixed rope of base
// rope_theta * alpha^(head_dim / (head_dim - 2)) with no attention scaling (read as such by
// derive_config; transformers computes it once, and its dynamic update never runs within
// max_position_embeddings). As in transformers, use_qk_norm, use_cla and attention_head_dim
// are not read: the q/k norms are always there (a checkpoint without them is refused naming
// the tensor), and so are every layer's k and v projections.
#include <fmt/format.h>

#include <cmath>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// The NTK-alpha rope as the default rope of its larger base.
Status derive_config(hf::Json& text, const std::string& path) {
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (!text.contains(key) || !text[key].is_object()) continue;
    const hf::JsonFields r(text[key], path);
    OG_ASSIGN_OR_RETURN(const std::string type, r.get_string(r.has("rope_type") ? "rope_type" : "type", "default"));
    OG_ASSIGN_OR_RETURN(const double alpha, r.get_double("alpha", 0.0));
    if (type != "dynamic" || alpha == 0) return Status::ok();  // the rope reader takes or refuses the rest
    const hf::JsonFields t(text, path);
    OG_ASSIGN_OR_RETURN(const int64_t hidden, t.get_int("hidden_size"));
    OG_ASSIGN_OR_RETURN(const int64_t heads, t.get_int("num_attention_heads"));
    if (heads < 1) return t.invalid("num_attention_heads", "a positive integer");
    OG_ASSIGN_OR_RETURN(const int64_t d, t.get_int("head_dim", hidden / heads));
    if (d <= 2) return t.invalid("head_dim", "more than 2 (the NTK-alpha rope divides by head_dim - 2)");
    if (!(alpha > 0)) return r.invalid("alpha", "a positive number");
    OG_ASSIGN_OR_RETURN(const double theta, r.has("rope_theta") ? r.get_double("rope_theta") : t.get_double("rope_theta", 10000.0));
    text["rope_theta"] = theta * std::pow(alpha, static_cast<double>(d) / static_cast<double>(d - 2));
    text.erase("rope_parameters");
    text["rope_scaling"] = nullptr;
    return Status::ok();
  }
  return Status::ok();
}

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  OG_TRY(read_attention_and_mlp_biases(t, o, /*read_mlp_bias=*/false));
  o.qk_norm = true;
  o.qk_norm_after_rope = true;
  o.q_norm_name = "query_layernorm";
  o.k_norm_name = "key_layernorm";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& hunyuan_v1_dense_family() {
  static constexpr ModelType kTypes[] = {{"hunyuan_v1_dense", false}};
  // transformers' HunYuanDenseV1Config defaults for keys a config.json may omit.
  static const Family f{.name = "hunyuan_v1_dense",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 10000.0},
                                            {"hidden_act", "silu"},
                                            {"attention_bias", false},
                                            {"tie_word_embeddings", false}},
                        .derive_config = derive_config,
                        .build = build};
  return f;
}

}  // namespace og::exporter
