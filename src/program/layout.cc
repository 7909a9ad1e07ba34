#include "program/layout.h"

namespace og::program {

int32_t CacheLayout::owner_layer(int32_t cache) const {
  for (int32_t l = 0; l < n_layers; ++l)
    if (layer_to_cache[l] == cache) return l;
  return -1;
}

Status CacheLayout::validate() const {
  const int32_t n = n_caches();
  if (n_layers <= 0) return bad_input("layout: n_layers is {}", n_layers);
  if (static_cast<int32_t>(layer_to_cache.size()) != n_layers)
    return bad_input("layout: layer_to_cache has {} entries for {} layers", layer_to_cache.size(), n_layers);
  if (static_cast<int32_t>(head_dims.size()) != n || static_cast<int32_t>(windows.size()) != n)
    return bad_input("layout: kv_heads, head_dims and windows must all have n_caches ({}) entries", n);
  if (!value_is_key.empty() && static_cast<int32_t>(value_is_key.size()) != n)
    return bad_input("layout: value_is_key has {} entries for {} caches", value_is_key.size(), n);
  std::vector<bool> seen(static_cast<size_t>(n), false);
  int32_t next_new = 0;
  for (int32_t l = 0; l < n_layers; ++l) {
    int32_t c = layer_to_cache[l];
    if (c < 0 || c >= n) return bad_input("layout: layer {} reads cache {}, but there are {} caches", l, c, n);
    if (!seen[c]) {
      // Caches are numbered in the order their owners appear.
      if (c != next_new) return bad_input("layout: cache {} first used by layer {} out of order", c, l);
      seen[c] = true;
      ++next_new;
    }
  }
  if (next_new != n) return bad_input("layout: {} caches but only {} are used by a layer", n, next_new);
  for (int32_t c = 0; c < n; ++c) {
    if (kv_heads[c] <= 0 || head_dims[c] <= 0)
      return bad_input("layout: cache {} has kv_heads {} and head_dim {}", c, kv_heads[c], head_dims[c]);
    if (windows[c] < 0) return bad_input("layout: cache {} has window {}", c, windows[c]);
  }
  return Status::ok();
}

}  // namespace og::program
