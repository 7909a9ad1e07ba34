// Internal to testgen: what a generator family provides, and the helpers families share.
//
// A family gives its tiny config.json, an optional rule that recomputes fields derived from
// the layer count, and the list of tensors (name, shape, initial distribution) that its
// transformers module holds for a given text config. Tensor lists are in module order.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "hf/json_fields.h"

namespace og::testgen {

using Json = nlohmann::json;

// Each element is drawn as mean + stddev * N(0, 1).
struct Init {
  double mean = 0.0;
  double stddev = 0.0;
};

// nn.Linear weights: N(0, gain^2 / fan_in), so outputs have about gain x the input's scale.
inline Init linear_init(int64_t fan_in, double gain = 1.0) {
  return {0.0, gain / std::sqrt(static_cast<double>(fan_in))};
}
// q and k projections get a gain so that attention scores spread (std ~2) and attention is
// clearly not uniform; the untied lm_head gets one so that logits have a std of ~3, as trained
// models do. Families with q/k norms are unaffected by the first.
inline constexpr double kQkGain = 1.5;
inline constexpr double kHeadGain = 3.0;
inline constexpr Init kEmbeddingInit{0.0, 1.0};
inline constexpr Init kUnitNormInit{1.0, 0.1};  // RMSNorm computing x * w
inline constexpr Init kZeroNormInit{0.0, 0.1};  // Gemma's RMSNorm computing x * (1 + w)
inline constexpr Init kBiasInit{0.0, 0.1};

// Raw U8 tensors (MXFP4 blocks and scales): integers uniform in [lo, hi].
struct ByteRange {
  int lo = 0;
  int hi = 255;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  Init init;
  std::optional<ByteRange> bytes = std::nullopt;  // set: a U8 tensor whatever the checkpoint dtype
};

class SpecList {
 public:
  void add(std::string name, std::vector<int64_t> shape, Init init) {
    specs_.push_back({std::move(name), std::move(shape), init});
  }
  // nn.Linear(in, out): `prefix.weight` [out, in], and `prefix.bias` [out] when bias.
  void linear(const std::string& prefix, int64_t out, int64_t in, bool bias = false, double gain = 1.0) {
    add(prefix + ".weight", {out, in}, linear_init(in, gain));
    if (bias) add(prefix + ".bias", {out}, kBiasInit);
  }
  void norm(const std::string& prefix, int64_t n, Init init) { add(prefix + ".weight", {n}, init); }
  // A gated MLP: `prefix`{gate,up}_proj [inter, hidden] and `prefix`down_proj [hidden, inter].
  void gated_mlp(const std::string& prefix, int64_t inter, int64_t hidden) {
    linear(prefix + "gate_proj", inter, hidden);
    linear(prefix + "up_proj", inter, hidden);
    linear(prefix + "down_proj", hidden, inter);
  }
  // Routed experts one tensor each, `prefix`E.{gate,up,down}_proj for E in [0, n).
  void experts(const std::string& prefix, int64_t n, int64_t inter, int64_t hidden) {
    for (int64_t e = 0; e < n; ++e) gated_mlp(prefix + std::to_string(e) + ".", inter, hidden);
  }
  void add_bytes(std::string name, std::vector<int64_t> shape, ByteRange range) {
    specs_.push_back({std::move(name), std::move(shape), Init{}, range});
  }
  std::vector<TensorSpec> take() { return std::move(specs_); }

 private:
  std::vector<TensorSpec> specs_;
};

struct FamilyContext {
  std::string family;
  std::string what;   // names the config in messages, e.g. "testgen gemma3 config"
  bool tie_default = false;
  int64_t head_dim_default = 0;   // head_dim when absent; 0: hidden_size / num_attention_heads
  int64_t kv_heads_default = 0;   // num_key_value_heads when absent; 0: num_attention_heads
  bool hub_layout = false;
};

// Fields every decoder family reads, checked for the shapes they imply.
struct TextDims {
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;                // the head_dim field, else the family's default
  std::vector<int64_t> intermediate;   // one per layer
  bool tie = false;
};

Result<TextDims> read_text_dims(const Json& text, const FamilyContext& ctx);

// Layer types from a period: layer i is full attention when (i + 1) % period == 0.
Json periodic_layer_types(int64_t layers, int64_t period);

struct FamilyDef {
  const char* name;
  bool wrapped;            // text model under "text_config"
  const char* dtype_key;   // "torch_dtype" or "dtype", as the family's real configs spell it
  bool tie_default;        // tie_word_embeddings when the config does not say
  // transformers' class defaults for head_dim and num_key_value_heads when config.json omits
  // them (0: hidden_size / num_attention_heads, resp. num_attention_heads).
  int64_t head_dim_default;
  int64_t kv_heads_default;
  Json (*tiny_config)();   // the whole config.json
  // Recomputes fields derived from the text config (e.g. layer_types after num_hidden_layers
  // changed) unless `overrides` sets them; may be null.
  Status (*derive)(Json& text, const Json& overrides, const FamilyContext& ctx);
  Result<std::vector<TensorSpec>> (*tensors)(const Json& text, const FamilyContext& ctx);
};

// Every generator, in generator order (families/registry.cc: one line per family file,
// families/F.cc, each a sibling of export/families/F.cc and reference/families/F.cc).
const std::vector<FamilyDef>& all_families();

}  // namespace og::testgen
