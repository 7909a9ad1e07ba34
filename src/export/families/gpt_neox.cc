// GPT-NeoX (model_type gpt_neox; Pythia, GPT-NeoX-20B, and the models trained with its
// code): tensors under gpt_neox. (embed_in, layers.N.attention, final_layer_norm) and the head
// embed_out; LayerNorms with biases (eps layer_norm_eps); one query_key_value projection whose
// rows are per head [q_h; k_h; v_h], biased iff attention_bias, and a biased `dense`; partial
// rotary (rotary_pct, base rotary_emb_base); a plain MLP dense_4h_to_h(act(dense_h_to_4h x))
// with biases; and with use_parallel_residual (the default) x + attn(ln1(x)) + mlp(ln2(x)).
// transformers' GPTNeoXModel.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.embed_name = "embed_in";
  o.attention_name = "attention";
  o.layer_norm = true;
  o.fused_qkv = true;
  o.fused_qkv_name = "query_key_value";
  o.fused_qkv_per_head = true;
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("attention_bias", true));
  o.o_bias = o.qkv_bias;
  o.o_name = "dense";
  o.mlp_bias = true;
  o.plain_mlp_up = "dense_h_to_4h";
  o.plain_mlp_down = "dense_4h_to_h";
  OG_ASSIGN_OR_RETURN(o.parallel, t.get_bool("use_parallel_residual", true));
  o.parallel_two_norms = o.parallel;
  o.final_norm_name = "final_layer_norm";
  o.head_name = "embed_out";
  OG_ASSIGN_OR_RETURN(o.activation, activation_from_config(ctx.config));
  return build_decoder(ctx, o);
}

// Old checkpoints saved the attention's causal-mask buffers with the weights.
bool is_buffer(const std::string& name) {
  return name.ends_with(".attention.bias") || name.ends_with(".attention.masked_bias");
}

}  // namespace

const Family& gpt_neox_family() {
  static constexpr ModelType kTypes[] = {{"gpt_neox", false}};
  // GPTNeoXConfig: rotary_pct is its partial_rotary_factor and rotary_emb_base its rope_theta;
  // defaults layer_norm_eps 1e-5 (the norms' eps), hidden_act gelu, rotary_pct 0.25, base 10000.
  static const Family f{.name = "gpt_neox",
                        .model_types = kTypes,
                        .config_defaults = {{"rms_norm_eps", 1e-5},
                                            {"hidden_act", "gelu"},
                                            {"partial_rotary_factor", 0.25},
                                            {"rope_theta", 10000.0}},
                        .config_aliases = {{"layer_norm_eps", "rms_norm_eps"},
                                           {"rotary_pct", "partial_rotary_factor"},
                                           {"rotary_emb_base", "rope_theta"}},
                        .build = build,
                        .text_prefix = "gpt_neox.",
                        .is_buffer = is_buffer};
  return f;
}

}  // namespace og::exporter
