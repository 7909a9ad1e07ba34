#include "runtime/cache/cache_policy.h"

#include <algorithm>

namespace og::runtime {

CachePolicy plan_cache(int64_t window, int64_t max_ctx_len, int64_t chunk) {
  CachePolicy p;
  p.window = window;
  if (window <= 0 || window + chunk - 1 >= max_ctx_len) {
    p.slots = max_ctx_len;  // a ring as large as the context is just a flat cache
    p.ring = false;
  } else {
    p.slots = window + chunk - 1;
    p.ring = true;
  }
  return p;
}

Status check_step(int64_t length, int64_t p0, int64_t T, int64_t chunk, int64_t max_ctx_len) {
  if (T < 1) return bad_input("step has no tokens");
  if (T > chunk) return bad_input("step of {} tokens exceeds prefill_chunk_size {}", T, chunk);
  if (p0 != length)
    return bad_input("step starts at position {} but the sequence has {} tokens (positions must continue it)", p0, length);
  if (p0 + T > max_ctx_len)
    return bad_input("positions {}..{} exceed max_ctx_len {} (context overflow)", p0, p0 + T - 1, max_ctx_len);
  return Status::ok();
}

Status check_rewind(int64_t length, int64_t n, const std::vector<CachePolicy>& caches,
                    std::span<const int64_t> stored_from) {
  if (n < 0 || n > length) return bad_input("cannot rewind a sequence of {} tokens to {}", length, n);
  for (size_t c = 0; c < caches.size(); ++c) {
    const CachePolicy& p = caches[c];
    if (p.window <= 0 || n == length) continue;
    const int64_t needed_from = first_needed(n, p.window);
    const int64_t held_from = std::max({p.ring ? length - p.slots : 0, c < stored_from.size() ? stored_from[c] : 0, int64_t{0}});
    if (needed_from < held_from)
      return bad_input("cannot rewind to {}: cache {} ({} of {} slots, window {}) no longer holds position {} that a "
                       "query at {} reads (it holds positions from {} on)", n, c, p.ring ? "ring" : "flat", p.slots,
                       p.window, needed_from, n, held_from);
  }
  return Status::ok();
}

}  // namespace og::runtime
