// The rules that end a generation, in one place for the two loops that generate (generate()
// for one session, Scheduler::advance for many). Each sampled token takes the same turn:
//   1. max_tokens_reached(): nothing more is sampled (max_tokens 0 samples nothing);
//   2. sample; is_stop_id(): the sequence ends before the token, which is neither passed on
//      nor counted;
//   3. count it and pass it on (the receiver may stop the sequence);
//   4. stop_after(): max_tokens now reached, the context full, or a grammar's sentence complete
//      (only an end token could follow: a stop, as if it had been sampled) ends it without
//      another step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "generate/generator.h"

namespace og::generate {

inline bool max_tokens_reached(const GenerateOptions& o, int64_t generated) {
  return o.max_tokens >= 0 && generated >= o.max_tokens;
}

inline bool is_stop_id(const GenerateOptions& o, int32_t token) {
  return std::find(o.stop_ids.begin(), o.stop_ids.end(), token) != o.stop_ids.end();
}

// After the generated-th token was passed on: why the sequence ends now, if it does.
// `cache_length` is what the cache holds (the token just sampled is not in it yet).
inline std::optional<StopReason> stop_after(const GenerateOptions& o, int64_t generated, int64_t cache_length, int64_t ctx,
                                            bool grammar_complete = false) {
  if (grammar_complete) return StopReason::kStopToken;
  if (max_tokens_reached(o, generated)) return StopReason::kMaxTokens;
  if (cache_length >= ctx) return StopReason::kContextFull;
  return std::nullopt;
}

}  // namespace og::generate
