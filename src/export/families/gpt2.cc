// GPT-2 (model_type gpt2; openai-community/gpt2 and its sizes, DistilGPT2, DialoGPT and the
// models trained with its code): tensors wte, wpe (a learned position table of n_positions rows),
// h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f, under transformer. (a
// GPT2LMHeadModel saved by transformers) or at the top level (the original checkpoints); every
// linear a Conv1D ([in, out], y = x W + b), c_attn's outputs q, k, v one block after the other;
// LayerNorms with biases (layer_norm_epsilon); no rotary embedding; a plain MLP
// c_proj(act(c_fc x)) (activation_function, gelu_new by default), n_inner wide (4 n_embd when
// null); the head tied to wte. transformers' GPT2Model: the attention scale is head_dim^-0.5
// when scale_attn_weights (else 1), divided by layer + 1 when scale_attn_by_inverse_layer_idx;
// reorder_and_upcast_attn only changes the precision torch computes the scores in (they are
// f32 here anyway). A context longer than n_positions is refused at export: the position table
// has no rows past it. Cross-attention (add_cross_attention) is an encoder-decoder's and left
// unread, so a checkpoint with it is refused naming its first crossattention tensor.
#include "export/families/gpt2.h"

#include "hf/safetensors.h"

namespace og::exporter {

Result<DecoderOptions> gpt2_decoder_options(const BuildContext& ctx, bool linear, const char* default_activation) {
  const hf::JsonFields t = ctx.config.text_fields();
  DecoderOptions o;
  o.embed_name = "wte";
  o.position_embed_name = "wpe";
  o.layers_name = "h";
  o.no_rope = true;
  o.conv1d = !linear;
  o.layer_norm = true;
  o.input_norm_name = "ln_1";
  o.ff_norm_name = "ln_2";
  o.final_norm_name = "ln_f";
  o.attention_name = "attn";
  o.fused_qkv = true;
  o.fused_qkv_name = "c_attn";
  o.o_name = "c_proj";
  o.qkv_bias = o.o_bias = o.mlp_bias = true;
  o.plain_mlp_up = "c_fc";
  o.plain_mlp_down = "c_proj";
  OG_ASSIGN_OR_RETURN(const bool scaled, t.get_bool("scale_attn_weights", true));
  if (!scaled) o.attn_scale = 1.0f;
  if (!linear) { OG_ASSIGN_OR_RETURN(o.attn_scale_by_inverse_layer, t.get_bool("scale_attn_by_inverse_layer_idx", false)); }
  // Read under its own name, so that a refusal names the field the file has.
  OG_ASSIGN_OR_RETURN(const std::string act, t.get_string("activation_function", default_activation));
  OG_ASSIGN_OR_RETURN(o.activation, activation_named(ctx.config, "activation_function", act));
  return o;
}

Result<std::string> gpt2_find_prefix(const hf::Checkpoint& ckpt) {
  for (const char* p : {"transformer.", ""})
    if (ckpt.find(std::string(p) + "wte.weight") != nullptr) return std::string(p);
  return bad_input("{}: no wte.weight at the top level or under transformer.", ckpt.dir());
}

bool gpt2_is_buffer(const std::string& name) { return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias"); }

hf::Json gpt2_config_defaults(const char* activation) {
  return {{"vocab_size", 50257},       {"max_position_embeddings", 1024}, {"hidden_size", 768},
          {"num_hidden_layers", 12},   {"num_attention_heads", 12},       {"intermediate_size", nullptr},
          {"hidden_act", activation},  {"rms_norm_eps", 1e-5}};
}

hf::Json gpt2_config_aliases() {
  return {{"n_embd", "hidden_size"},
          {"n_layer", "num_hidden_layers"},
          {"n_head", "num_attention_heads"},
          {"n_positions", "max_position_embeddings"},
          {"n_inner", "intermediate_size"},
          {"activation_function", "hidden_act"},
          {"layer_norm_epsilon", "rms_norm_eps"}};
}

namespace {

Status build(BuildContext& ctx) {
  OG_ASSIGN_OR_RETURN(DecoderOptions o, gpt2_decoder_options(ctx, false, "gelu_new"));
  return build_decoder(ctx, o);
}

}  // namespace

const Family& gpt2_family() {
  static constexpr ModelType kTypes[] = {{"gpt2", false}};
  static const Family f{.name = "gpt2",
                        .model_types = kTypes,
                        .config_defaults = gpt2_config_defaults("gelu_new"),
                        .config_aliases = gpt2_config_aliases(),
                        .derive_config = default_mlp_width,
                        .tie_word_embeddings_default = true,
                        .build = build,
                        .find_prefix = gpt2_find_prefix,
                        .is_buffer = gpt2_is_buffer};
  return f;
}

}  // namespace og::exporter
