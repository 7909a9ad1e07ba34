// Gemma-4 text (gemma4 wrapper or gemma4_text). Layer types: layer_types, else sliding
// iff (i + 1) % 6 != 0; the last layer is always full (transformers forces it). Full
// layers use their own k/v geometry: per_layer_config[i] when present, else head_dim =
// global_head_dim (default 512) and, only with attention_k_eq_v, kv heads =
// num_global_key_value_heads (transformers' Gemma4TextConfig.__post_init__).
#include "export/build_context.h"
#include "export/family.h"

namespace og::exporter {
namespace {

class Gemma4Family final : public Family {
 public:
  const char* name() const override { return "gemma4"; }
  Result<std::vector<std::string>> default_layer_types(const hf::ModelConfig& c) const override {
    std::vector<std::string> types;
    for (int64_t i = 0; i < c.num_hidden_layers; ++i)
      types.push_back((i + 1) % 6 != 0 ? "sliding_attention" : "full_attention");
    return types;
  }
  void finalize_layer_types(std::vector<std::string>& types) const override {
    if (!types.empty()) types.back() = "full_attention";
  }
  Result<KvGeometry> kv_geometry(const hf::ModelConfig& c, int64_t layer, const std::string& type) const override {
    KvGeometry g{c.num_key_value_heads, c.head_dim};
    hf::JsonFields t = c.text_fields();
    if (t.has("per_layer_config")) {
      OG_ASSIGN_OR_RETURN(hf::JsonFields plc, t.get_object("per_layer_config"));
      const std::string key = std::to_string(layer);
      if (plc.has(key)) {
        OG_ASSIGN_OR_RETURN(hf::JsonFields lc, plc.get_object(key));
        OG_ASSIGN_OR_RETURN(g.head_dim, lc.get_int("head_dim", g.head_dim));
        OG_ASSIGN_OR_RETURN(g.kv_heads, lc.get_int("num_key_value_heads", g.kv_heads));
      }
      return g;
    }
    if (type != "full_attention") return g;
    OG_ASSIGN_OR_RETURN(g.head_dim, t.get_int("global_head_dim", 512));
    OG_ASSIGN_OR_RETURN(bool k_eq_v, t.get_bool("attention_k_eq_v", false));
    if (k_eq_v) { OG_ASSIGN_OR_RETURN(g.kv_heads, t.get_int("num_global_key_value_heads", g.kv_heads)); }
    return g;
  }
  Status build(BuildContext& ctx) const override {
    return unsupported("{}: model_type '{}': exporting Gemma-4 graphs (per-layer inputs, KV sharing) is not "
                       "implemented yet; `offgraph layout` works for it",
                       ctx.config.path, ctx.config.model_type);
  }
};

}  // namespace

const Family& gemma4_family() {
  static const Gemma4Family f;
  return f;
}

}  // namespace og::exporter
