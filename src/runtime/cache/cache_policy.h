// Cache storage policy and sequence bookkeeping on plain integers (DESIGN.md §4): no
// tensors here, so planning, commit and rewind rules are testable on their own.
//
// A full-history cache is flat (one slot per position up to max_ctx_len). A sliding cache
// of window W is a ring of W + chunk - 1 slots: a step of up to `chunk` tokens writes
// before it attends, and the oldest key any of its queries needs is never overwritten.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace og::runtime {

struct CachePolicy {
  int64_t window = 0;   // 0: full history
  int64_t slots = 0;
  bool ring = false;
};

CachePolicy plan_cache(int64_t window, int64_t max_ctx_len, int64_t prefill_chunk_size);

// A step of T tokens at positions p0.. on a sequence of `length` committed tokens.
Status check_step(int64_t length, int64_t p0, int64_t T, int64_t prefill_chunk_size, int64_t max_ctx_len);

// Rewinding a sequence of `length` tokens to n is allowed when every ring still holds the
// keys that a query at position n would need (positions n - W + 1 .. n - 1).
Status check_rewind(int64_t length, int64_t n, const std::vector<CachePolicy>& caches);

}  // namespace og::runtime
