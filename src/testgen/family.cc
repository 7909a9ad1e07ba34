#include "testgen/family.h"

#include <fmt/format.h>

namespace og::testgen {

Result<TextDims> read_text_dims(const Json& text, const FamilyContext& ctx) {
  hf::JsonFields f(text, ctx.what);
  TextDims d;
  OG_ASSIGN_OR_RETURN(d.vocab, f.get_int("vocab_size"));
  OG_ASSIGN_OR_RETURN(d.hidden, f.get_int("hidden_size"));
  OG_ASSIGN_OR_RETURN(d.layers, f.get_int("num_hidden_layers"));
  OG_ASSIGN_OR_RETURN(d.heads, f.get_int("num_attention_heads"));
  OG_ASSIGN_OR_RETURN(d.kv_heads, f.get_int("num_key_value_heads", ctx.kv_heads_default > 0 ? ctx.kv_heads_default : d.heads));
  for (auto [key, v] : {std::pair{"vocab_size", d.vocab}, std::pair{"hidden_size", d.hidden},
                        std::pair{"num_hidden_layers", d.layers}, std::pair{"num_attention_heads", d.heads},
                        std::pair{"num_key_value_heads", d.kv_heads}})
    if (v <= 0) return f.invalid(key, "a positive integer");
  if (d.layers > 4096) return f.invalid("num_hidden_layers", "at most 4096");
  if (d.heads % d.kv_heads != 0)
    return bad_input("{}: num_attention_heads ({}) is not a multiple of num_key_value_heads ({})", ctx.what,
                     d.heads, d.kv_heads);
  if (f.has("head_dim")) {
    OG_ASSIGN_OR_RETURN(d.head_dim, f.get_int("head_dim"));
    if (d.head_dim <= 0) return f.invalid("head_dim", "a positive integer");
  } else if (ctx.head_dim_default > 0) {
    d.head_dim = ctx.head_dim_default;
  } else {
    if (d.hidden % d.heads != 0)
      return bad_input("{}: hidden_size ({}) is not a multiple of num_attention_heads ({}) and head_dim is absent",
                       ctx.what, d.hidden, d.heads);
    d.head_dim = d.hidden / d.heads;
  }
  OG_ASSIGN_OR_RETURN(d.intermediate, f.get_int_list("intermediate_size"));
  if (d.intermediate.size() == 1) d.intermediate.assign(static_cast<size_t>(d.layers), d.intermediate[0]);
  if (static_cast<int64_t>(d.intermediate.size()) != d.layers)
    return f.invalid("intermediate_size", fmt::format("an integer or a list of {} integers", d.layers));
  for (int64_t v : d.intermediate)
    if (v <= 0) return f.invalid("intermediate_size", "positive");
  OG_ASSIGN_OR_RETURN(d.tie, f.get_bool("tie_word_embeddings", ctx.tie_default));
  return d;
}

Json periodic_layer_types(int64_t layers, int64_t period) {
  Json types = Json::array();
  for (int64_t i = 0; i < layers; ++i)
    types.push_back((i + 1) % period == 0 ? "full_attention" : "sliding_attention");
  return types;
}

}  // namespace og::testgen
