// What the Gemma 3n and Gemma 4 generators share (the language-model part of their
// ForConditionalGeneration classes, model.language_model.*): per-layer inputs, KV sharing.
#pragma once

#include <string>
#include <vector>

#include "testgen/family.h"

namespace og::testgen {

inline constexpr const char* kTextPrefix = "model.language_model.";

struct KvSharing {
  std::vector<std::string> layer_types;
  int64_t first_shared = 0;  // == layers when nothing is shared
  bool shared(int64_t layer) const { return layer >= first_shared; }
  bool full(int64_t layer) const { return layer_types[static_cast<size_t>(layer)] == "full_attention"; }
};

// layer_types and num_kv_shared_layers, checked the way transformers uses them: a shared
// layer reads the last earlier non-shared layer of its own type, so that type must occur.
Result<KvSharing> read_kv_sharing(const Json& text, const FamilyContext& ctx, int64_t layers);

bool overridden(const Json& overrides, const char* key);

// With a new layer count, the per-layer fields follow the tiny defaults' rules: full
// attention every third layer, a third of the layers kv-shared.
Status derive_layer_fields(Json& text, const Json& overrides, const FamilyContext& ctx, bool force_last_full);

// Per-layer-input tensors of the model (not of a layer).
void per_layer_model_tensors(SpecList& s, int64_t vocab_per_layer, int64_t layers, int64_t per_layer, int64_t hidden);

void per_layer_layer_tensors(SpecList& s, const std::string& p, int64_t per_layer, int64_t hidden);

}  // namespace og::testgen
