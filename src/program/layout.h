// The cache layout a program publishes (DESIGN.md §3): how many KV caches a sequence
// needs, which cache each attention layer reads, and each cache's geometry and window.
// A layer whose layer_to_cache entry points at a cache owned by an earlier layer is
// KV-shared: it computes no k/v and only reads.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace og::program {

struct CacheLayout {
  int32_t n_layers = 0;
  std::vector<int32_t> layer_to_cache;  // [n_layers]
  std::vector<int32_t> kv_heads;        // [n_caches]
  std::vector<int32_t> head_dims;       // [n_caches]
  std::vector<int32_t> windows;         // [n_caches], 0 = full history
  // [n_caches], or empty when no cache has it: the cache's v is its k (the writing op's k and v
  // inputs are one value), so one copy serves both (multi-head latent attention's latent).
  std::vector<uint8_t> value_is_key;

  int32_t n_caches() const { return static_cast<int32_t>(kv_heads.size()); }
  // The layer that computes (writes) cache c: the first layer mapped to it.
  int32_t owner_layer(int32_t cache) const;
  bool layer_writes_cache(int32_t layer) const { return owner_layer(layer_to_cache[layer]) == layer; }
  bool values_are_keys(int32_t cache) const {
    return static_cast<size_t>(cache) < value_is_key.size() && value_is_key[static_cast<size_t>(cache)] != 0;
  }

  // Structural consistency: sizes agree, ids in range, every cache has an owner that
  // precedes its readers, positive geometry, non-negative windows.
  Status validate() const;
  bool operator==(const CacheLayout&) const = default;
};

}  // namespace og::program
