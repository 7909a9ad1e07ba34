// GPTBigCode (model_type gpt_bigcode; StarCoder, StarCoderBase, SantaCoder, tiny_starcoder):
// GPT-2's decoder (families/gpt2.h: learned positions, LayerNorms with biases, a plain MLP, no
// rope, tied head) with nn.Linear projections and, with multi_query (the default), one kv head:
// c_attn's rows are q [n_embd], then k and v [head_dim] each; without it they are per head
// [q_h; k_h; v_h] (transformers' view(..., heads, 3 * head_dim), unlike GPT-2's). The softmax
// upcast switches (attention_softmax_in_fp32, scale_attention_softmax_in_fp32) change only the
// precision torch computes the scores in: scores here are f32.
#include "export/families/gpt2.h"

namespace og::exporter {
namespace {

Status build(BuildContext& ctx) {
  OG_ASSIGN_OR_RETURN(DecoderOptions o, gpt2_decoder_options(ctx, true, "gelu_pytorch_tanh"));
  OG_ASSIGN_OR_RETURN(const bool multi_query, ctx.config.text_fields().get_bool("multi_query", true));
  o.fused_qkv_per_head = !multi_query;
  return build_decoder(ctx, o);
}

// n_inner as GPT-2's; one kv head under multi_query (GPTBigCodeAttention's kv_heads).
Status derive_config(hf::Json& text, const std::string& path) {
  OG_TRY(default_mlp_width(text, path));
  const hf::JsonFields f(text, path);
  OG_ASSIGN_OR_RETURN(const bool multi_query, f.get_bool("multi_query", true));
  if (multi_query) {
    text["num_key_value_heads"] = 1;
  } else {
    OG_ASSIGN_OR_RETURN(const int64_t heads, f.get_int("num_attention_heads"));
    text["num_key_value_heads"] = heads;
  }
  return Status::ok();
}

}  // namespace

const Family& gpt_bigcode_family() {
  static constexpr ModelType kTypes[] = {{"gpt_bigcode", false}};
  // GPTBigCodeConfig: GPT-2's attribute_map and defaults, gelu_pytorch_tanh, multi_query true.
  static const Family f{.name = "gpt_bigcode",
                        .model_types = kTypes,
                        .config_defaults = gpt2_config_defaults("gelu_pytorch_tanh"),
                        .config_aliases = gpt2_config_aliases(),
                        .derive_config = derive_config,
                        .tie_word_embeddings_default = true,
                        .build = build,
                        .find_prefix = gpt2_find_prefix,
                        .is_buffer = gpt2_is_buffer};
  return f;
}

}  // namespace og::exporter
