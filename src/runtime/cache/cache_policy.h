// Cache storage policy and sequence bookkeeping on plain integers (DESIGN.md §4): no
// tensors here, so planning, commit and rewind rules are testable on their own.
//
// A full-history cache is flat (one slot per position up to max_ctx_len). A sliding cache
// of window W is a ring of W + chunk - 1 slots: a step of up to `chunk` tokens writes
// before it attends, and the oldest key any of its queries needs is never overwritten.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace og::runtime {

struct CachePolicy {
  int64_t window = 0;   // 0: full history
  int64_t slots = 0;
  bool ring = false;
};

CachePolicy plan_cache(int64_t window, int64_t max_ctx_len, int64_t prefill_chunk_size);

// The window rule, in one place: a query at position p attends keys p - W + 1 .. p of a
// cache of window W (all of 0 .. p when W is 0). So a sequence of `length` tokens, whose
// next query is at `length`, still needs positions first_needed(length, W) .. length - 1
// of that cache: what a prefix snapshot holds, what a rewind needs kept, what a restore
// must find. (The attention kernel masks by the same rule: DESIGN.md §2.)
inline int64_t first_needed(int64_t length, int64_t window) {
  return window > 0 ? (length - window + 1 > 0 ? length - window + 1 : 0) : 0;
}

// Whether the state of a sequence serves every shorter prefix of it too: only when no cache
// drops positions, i.e. none has a window (a window's state holds just what its own length
// needs: first_needed above).
inline bool prefix_serves_shorter(std::span<const int32_t> windows) {
  for (int32_t w : windows)
    if (w > 0) return false;
  return true;
}

// A step of T tokens at positions p0.. on a sequence of `length` committed tokens.
Status check_step(int64_t length, int64_t p0, int64_t T, int64_t prefill_chunk_size, int64_t max_ctx_len);

// Rewinding a sequence of `length` tokens to n is allowed when every windowed cache still
// holds the keys that a query at position n would need (positions n - W + 1 .. n - 1): a
// ring holds at most its last `slots` positions, and `stored_from[c]` (when given) is the
// first position cache c holds at all (a restored prefix writes only what its own length
// reads; CacheSet::check_rewind passes it).
Status check_rewind(int64_t length, int64_t n, const std::vector<CachePolicy>& caches,
                    std::span<const int64_t> stored_from = {});

}  // namespace og::runtime
