#include "export/layout_resolver.h"

#include "export/family.h"
#include "hf/model_dir.h"

namespace og::exporter {

Result<std::vector<LayerAttention>> resolve_layer_attention(const hf::ModelConfig& c) {
  const Family* family = family_of(c);
  if (family == nullptr) return unsupported("{}: no exporter for model_type '{}'", c.path, c.model_type);
  const int64_t n = c.num_hidden_layers;
  std::vector<std::string> types = c.layer_types;
  if (types.empty()) { OG_ASSIGN_OR_RETURN(types, family->default_layer_types(c)); }
  family->finalize_layer_types(types);
  OG_ASSIGN_OR_RETURN(int64_t window, family->sliding_window(c));

  std::vector<LayerAttention> layers(static_cast<size_t>(n));
  for (int64_t l = 0; l < n; ++l) {
    LayerAttention& a = layers[l];
    a.type = types[l];
    if (a.type == "sliding_attention") {
      if (window <= 0)
        return bad_input("{}: layer {} is sliding_attention but {}sliding_window is not set", c.path, l, c.text_prefix());
      a.window = window;
    } else if (a.type != "full_attention") {
      return unsupported("{}: layer {} has layer type '{}', which offgraph cannot run (supported: full_attention, "
                         "sliding_attention)",
                         c.path, l, a.type);
    }
    OG_ASSIGN_OR_RETURN(KvGeometry g, family->kv_geometry(c, l, a.type));
    if (g.kv_heads <= 0 || g.head_dim <= 0)
      return bad_input("{}: layer {} has {} kv heads of dim {}", c.path, l, g.kv_heads, g.head_dim);
    a.kv_heads = g.kv_heads;
    a.head_dim = g.head_dim;
    a.value_is_key = g.value_is_key;
  }
  // KV-shared tail: each layer reads the last earlier layer of its type before the tail.
  const int64_t first_shared = n - c.num_kv_shared_layers;
  for (int64_t l = first_shared; l < n; ++l) {
    int64_t donor = -1;
    for (int64_t d = first_shared - 1; d >= 0; --d)
      if (layers[d].type == layers[l].type) { donor = d; break; }
    if (donor < 0)
      return bad_input("{}: layer {} ({}) is KV-shared (num_kv_shared_layers {}) but no earlier layer has its type",
                       c.path, l, layers[l].type, c.num_kv_shared_layers);
    if (layers[donor].kv_heads != layers[l].kv_heads || layers[donor].head_dim != layers[l].head_dim)
      return bad_input("{}: KV-shared layer {} and its donor layer {} differ in k/v geometry", c.path, l, donor);
    layers[l].donor = donor;
  }
  return layers;
}

Result<program::CacheLayout> resolve_layout(const hf::ModelConfig& c) {
  OG_ASSIGN_OR_RETURN(auto layers, resolve_layer_attention(c));
  program::CacheLayout out;
  out.n_layers = static_cast<int32_t>(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerAttention& a = layers[l];
    if (a.donor >= 0) {
      out.layer_to_cache.push_back(out.layer_to_cache[static_cast<size_t>(a.donor)]);
      continue;
    }
    out.layer_to_cache.push_back(out.n_caches());
    out.kv_heads.push_back(static_cast<int32_t>(a.kv_heads));
    out.head_dims.push_back(static_cast<int32_t>(a.head_dim));
    out.windows.push_back(static_cast<int32_t>(a.window));
    out.value_is_key.push_back(a.value_is_key ? 1 : 0);
  }
  if (std::none_of(out.value_is_key.begin(), out.value_is_key.end(), [](uint8_t v) { return v != 0; }))
    out.value_is_key.clear();  // none: the field is left out of the program
  OG_TRY(out.validate());
  return out;
}

Result<ModelLayout> resolve_model_layout(const std::string& model) {
  OG_ASSIGN_OR_RETURN(hf::ModelLocation loc, hf::resolve_model(model));
  OG_ASSIGN_OR_RETURN(hf::ModelConfig config, load_model_config(loc.config_path));
  OG_ASSIGN_OR_RETURN(program::CacheLayout layout, resolve_layout(config));
  return ModelLayout{.model_id = loc.model_id, .model_type = config.model_type, .layout = std::move(layout)};
}

}  // namespace og::exporter
