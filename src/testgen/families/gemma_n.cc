#include "testgen/families/gemma_n.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace og::testgen {

Result<KvSharing> read_kv_sharing(const Json& text, const FamilyContext& ctx, int64_t layers) {
  hf::JsonFields f(text, ctx.what);
  KvSharing k;
  OG_ASSIGN_OR_RETURN(k.layer_types, f.get_string_list("layer_types"));
  if (static_cast<int64_t>(k.layer_types.size()) != layers)
    return f.invalid("layer_types", fmt::format("a list of {} layer types (num_hidden_layers)", layers));
  for (const std::string& t : k.layer_types)
    if (t != "full_attention" && t != "sliding_attention")
      return f.invalid("layer_types", "a list of \"full_attention\" / \"sliding_attention\"");
  OG_ASSIGN_OR_RETURN(int64_t shared, f.get_int("num_kv_shared_layers", 0));
  if (shared < 0 || shared >= layers)
    return f.invalid("num_kv_shared_layers", fmt::format("between 0 and {}", layers - 1));
  k.first_shared = layers - shared;
  auto begin = k.layer_types.begin();
  for (int64_t l = k.first_shared; l < layers; ++l)
    if (std::find(begin, begin + k.first_shared, k.layer_types[static_cast<size_t>(l)]) == begin + k.first_shared)
      return bad_input("{}: kv-shared layer {} is {} but no earlier layer of that type computes k/v", ctx.what, l,
                       k.layer_types[static_cast<size_t>(l)]);
  return k;
}

bool overridden(const Json& overrides, const char* key) { return overrides.contains(key); }

Status derive_layer_fields(Json& text, const Json& overrides, const FamilyContext& ctx, bool force_last_full) {
  OG_ASSIGN_OR_RETURN(int64_t layers, hf::JsonFields(text, ctx.what).get_int("num_hidden_layers"));
  if (layers <= 0) return hf::JsonFields(text, ctx.what).invalid("num_hidden_layers", "a positive integer");
  if (!overridden(overrides, "layer_types")) {
    text["layer_types"] = periodic_layer_types(layers, 3);
    if (force_last_full) text["layer_types"].back() = "full_attention";
  }
  if (!overridden(overrides, "num_kv_shared_layers") && overridden(overrides, "num_hidden_layers"))
    text["num_kv_shared_layers"] = layers / 3;
  return Status::ok();
}

void per_layer_model_tensors(SpecList& s, int64_t vocab_per_layer, int64_t layers, int64_t per_layer, int64_t hidden) {
  const std::string m = kTextPrefix;
  s.add(m + "embed_tokens_per_layer.weight", {vocab_per_layer, layers * per_layer}, kEmbeddingInit);
  s.linear(m + "per_layer_model_projection", layers * per_layer, hidden);
  s.norm(m + "per_layer_projection_norm", per_layer, kUnitNormInit);
}

void per_layer_layer_tensors(SpecList& s, const std::string& p, int64_t per_layer, int64_t hidden) {
  s.linear(p + "per_layer_input_gate", per_layer, hidden);
  s.linear(p + "per_layer_projection", hidden, per_layer);
  s.norm(p + "post_per_layer_input_norm", hidden, kUnitNormInit);
}

}  // namespace og::testgen
