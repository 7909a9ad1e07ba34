// Apertus (model_type apertus; Apertus-8B/70B-2509): transformers' ApertusForCausalLM. Llama's
// pre-norm decoder with its norms named attention_layernorm and feedforward_layernorm, per-head
// q_norm / k_norm (RMSNorms over head_dim) before the rope (llama3 scaling by default), q/k/v/o
// biases iff attention_bias, and the ungated MLP down_proj(xIELU(up_proj x)) without biases
// (ApertusMLP hard-codes bias=False; mlp_bias is not read). Each layer's xIELU has its own
// scalars mlp.act_fn.{alpha_p, alpha_n} (softplus-parameterized, [1]) and {beta, eps} ([]),
// resolved here to the op's effective coefficients: alpha_p = softplus(alpha_p), alpha_n =
// beta + softplus(alpha_n). qk_norm and post_norm are not read (as in transformers: the q/k
// norms are always there).
#include <fmt/format.h>

#include <cmath>

#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

// torch.nn.functional.softplus (beta 1, threshold 20: x itself above it).
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

Result<ValueId> xielu_mlp(BuildContext& ctx, int64_t l, ValueId h) {
  GraphBuilder& g = ctx.g;
  const hf::ModelConfig& c = ctx.config;
  const int64_t H = c.hidden_size, I = c.intermediate_size[static_cast<size_t>(l)];
  const std::string m = fmt::format("layers.{}.mlp.", l);
  OG_ASSIGN_OR_RETURN(WeightId up, ctx.weight(m + "up_proj.weight", {I, H}));
  OG_ASSIGN_OR_RETURN(WeightId down, ctx.weight(m + "down_proj.weight", {H, I}));
  double v[4];  // alpha_p, alpha_n, beta, eps as stored
  const char* names[4] = {"alpha_p", "alpha_n", "beta", "eps"};
  for (int k = 0; k < 4; ++k) {
    const std::vector<int64_t> shape = k < 2 ? std::vector<int64_t>{1} : std::vector<int64_t>{};
    OG_ASSIGN_OR_RETURN(const hf::TensorView* t, ctx.tensor(m + "act_fn." + names[k], shape));
    g.mark_ignored(t->name);
    v[k] = t->get(0);
    if (!std::isfinite(v[k])) return bad_input("{}: tensor '{}' is not finite ({})", t->file, t->name, v[k]);
  }
  const double alpha_p = softplus(v[0]), alpha_n = v[2] + softplus(v[1]);
  const ValueId a = g.xielu(g.linear(h, up), static_cast<float>(alpha_p), static_cast<float>(alpha_n),
                            static_cast<float>(v[2]), static_cast<float>(v[3]));
  return g.linear(a, down);
}

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  OG_ASSIGN_OR_RETURN(const std::string act, t.get_string("hidden_act", "xielu"));
  if (act != "xielu")
    return unsupported("{}: field '{}' is '{}': Apertus's MLP is offgraph's only with xielu", ctx.config.path,
                       t.field_name("hidden_act"), act);
  DecoderOptions o;
  OG_TRY(read_attention_and_mlp_biases(t, o, /*read_mlp_bias=*/false));
  o.qk_norm = true;
  o.input_norm_name = "attention_layernorm";
  o.ff_norm_name = "feedforward_layernorm";
  o.mlp = xielu_mlp;
  return build_decoder(ctx, o);
}

}  // namespace

const Family& apertus_family() {
  static constexpr ModelType kTypes[] = {{"apertus", false}};
  // transformers' ApertusConfig defaults for keys a config.json may omit (its default rope:
  // llama3, theta 1.2e7, factor 8 from 8192, low/high frequency factors 1 and 4).
  static const Family f{.name = "apertus",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"rope_theta", 12000000.0},
                                            {"rope_scaling",
                                             {{"rope_type", "llama3"}, {"factor", 8.0}, {"original_max_position_embeddings", 8192},
                                              {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}}},
                                            {"hidden_act", "xielu"},
                                            {"attention_bias", false},
                                            {"tie_word_embeddings", false}},
                        .build = build};
  return f;
}

}  // namespace og::exporter
