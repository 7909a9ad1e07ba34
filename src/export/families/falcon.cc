// Falcon (model_type falcon; Falcon-7B/40B/180B and their -instruct, Falcon2-11B): tensors
// under transformer. (word_embeddings, h.N.self_attention.{query_key_value, dense},
// h.N.mlp.{dense_h_to_4h, dense_4h_to_h}, ln_f); LayerNorms with biases (layer_norm_epsilon);
// biases on every projection iff `bias`; the rope on every head's full width (rope_theta); a
// plain MLP dense_4h_to_h(act(dense_h_to_4h x)) (activation, gelu by default; ffn_hidden_size,
// 4 hidden by default); tied head by default. transformers' FalconModel, three layouts of the
// fused projection and of the block:
//   new_decoder_architecture: num_kv_heads groups of [q of num_heads / num_kv_heads heads; k; v]
//     (its view(..., -1, heads / kv + 2, head_dim)), and the parallel block, from ln_attn and
//     ln_mlp (num_ln_in_parallel_attn 2, the default) or from input_layernorm alone (1);
//   else multi_query (the default): [q of every head; k; v], one kv head;
//   else per head [q_h; k_h; v_h] (view(..., heads, 3, head_dim)), as many kv heads as heads;
// and without the new architecture the parallel block from input_layernorm alone
// (parallel_attn, the default) or the sequential one (input_layernorm, post_attention_layernorm).
// alibi (Falcon-RW) is refused, naming the field; so is the new architecture without
// parallel_attn, which transformers cannot run either.
#include "export/decoder.h"
#include "export/family.h"

namespace og::exporter {
namespace {

struct Shape {
  bool new_arch = false, multi_query = true, parallel = true;
  int64_t norms_in_parallel = 1;
};

Result<Shape> shape_of(const hf::ModelConfig& c) {
  const hf::JsonFields t = c.text_fields();
  Shape s;
  OG_ASSIGN_OR_RETURN(const bool alibi, t.get_bool("alibi", false));
  if (alibi) return unsupported("{}: field '{}' is true: ALiBi attention (Falcon-RW) is not supported", c.path, t.field_name("alibi"));
  OG_ASSIGN_OR_RETURN(s.new_arch, t.get_bool("new_decoder_architecture", false));
  OG_ASSIGN_OR_RETURN(s.multi_query, t.get_bool("multi_query", true));
  OG_ASSIGN_OR_RETURN(s.parallel, t.get_bool("parallel_attn", true));
  if (s.new_arch && !s.parallel)
    return unsupported("{}: field '{}' is false with new_decoder_architecture, a block transformers cannot run", c.path,
                       t.field_name("parallel_attn"));
  OG_ASSIGN_OR_RETURN(s.norms_in_parallel, t.get_int("num_ln_in_parallel_attn", s.new_arch ? 2 : 1));
  if (s.new_arch && s.norms_in_parallel != 1 && s.norms_in_parallel != 2)
    return t.invalid("num_ln_in_parallel_attn", "1 or 2");
  return s;
}

Status build(BuildContext& ctx) {
  const hf::JsonFields t = ctx.config.text_fields();
  OG_ASSIGN_OR_RETURN(const Shape s, shape_of(ctx.config));
  DecoderOptions o;
  o.embed_name = "word_embeddings";
  o.layers_name = "h";
  o.layer_norm = true;
  o.attention_name = "self_attention";
  o.fused_qkv = true;
  o.fused_qkv_name = "query_key_value";
  o.fused_qkv_grouped = s.new_arch;
  o.fused_qkv_per_head = !s.new_arch && !s.multi_query;
  o.o_name = "dense";
  OG_ASSIGN_OR_RETURN(o.qkv_bias, t.get_bool("bias", false));
  o.o_bias = o.mlp_bias = o.qkv_bias;
  o.plain_mlp_up = "dense_h_to_4h";
  o.plain_mlp_down = "dense_4h_to_h";
  o.final_norm_name = "ln_f";
  o.parallel = s.parallel;
  if (s.new_arch && s.norms_in_parallel == 2) {
    o.parallel_two_norms = true;
    o.input_norm_name = "ln_attn";
    o.ff_norm_name = "ln_mlp";
  }
  // Read under its own name, so that a refusal names the field the file has.
  OG_ASSIGN_OR_RETURN(const std::string act, t.get_string("activation", "gelu"));
  OG_ASSIGN_OR_RETURN(o.activation, activation_named(ctx.config, "activation", act));
  return build_decoder(ctx, o);
}

// The kv heads as FalconAttention counts them: num_kv_heads (default num_attention_heads) with
// the new architecture or without multi_query, else one; ffn_hidden_size null is 4 hidden.
Status derive_config(hf::Json& text, const std::string& path) {
  const hf::JsonFields f(text, path);
  OG_ASSIGN_OR_RETURN(const bool new_arch, f.get_bool("new_decoder_architecture", false));
  OG_ASSIGN_OR_RETURN(const bool multi_query, f.get_bool("multi_query", true));
  OG_ASSIGN_OR_RETURN(const int64_t heads, f.get_int("num_attention_heads"));
  OG_ASSIGN_OR_RETURN(const int64_t kv, f.get_int("num_kv_heads", heads));
  text["num_key_value_heads"] = new_arch || !multi_query ? kv : 1;
  return default_mlp_width(text, path);
}

}  // namespace

const Family& falcon_family() {
  static constexpr ModelType kTypes[] = {{"falcon", false}};
  // FalconConfig's defaults (its n_embed kwarg read as hidden_size; ffn_hidden_size None: 4 hidden).
  static const Family f{.name = "falcon",
                        .model_types = kTypes,
                        .config_defaults = {{"vocab_size", 65024},
                                            {"hidden_size", 4544},
                                            {"num_hidden_layers", 32},
                                            {"num_attention_heads", 71},
                                            {"intermediate_size", nullptr},
                                            {"hidden_act", "gelu"},
                                            {"rms_norm_eps", 1e-5},
                                            {"max_position_embeddings", 2048},
                                            {"rope_theta", 10000.0}},
                        .config_aliases = {{"n_embed", "hidden_size"},
                                           {"ffn_hidden_size", "intermediate_size"},
                                           {"activation", "hidden_act"},
                                           {"layer_norm_epsilon", "rms_norm_eps"}},
                        .derive_config = derive_config,
                        .tie_word_embeddings_default = true,
                        .build = build,
                        .text_prefix = "transformer."};
  return f;
}

}  // namespace og::exporter
