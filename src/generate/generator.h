// The generation loop: chunked prefill of the prompt (only the last row's logits), then
// one token per step until max_tokens, a stop id, or the context is full. Tokens stream
// out through a callback; timings come back as GenerateStats (the usual CLI speed report).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "generate/sampler.h"
#include "runtime/session.h"

namespace og::generate {

struct GenerateOptions {
  int32_t max_tokens = 128;          // -1: until a stop id or the context is full
  SamplingParams sampling;
  std::vector<int32_t> stop_ids;     // EOS ids and the template's turn end
};

enum class StopReason { kMaxTokens, kStopToken, kContextFull, kCallback, kCancelled };

struct GenerateStats {
  int64_t prompt_tokens = 0;
  double prefill_seconds = 0;
  double first_token_seconds = 0;    // from the start of prefill to the first sampled token
  int64_t generated_tokens = 0;
  double decode_seconds = 0;         // steps after the first token
  StopReason stop = StopReason::kMaxTokens;
  double prefill_tok_s() const { return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0; }
  double decode_tok_s() const {
    return decode_seconds > 0 && generated_tokens > 1 ? (generated_tokens - 1) / decode_seconds : 0;
  }
};

// Called with each generated token (stop tokens are not passed); return false to stop.
using TokenCallback = std::function<bool(int32_t token)>;

// Appends `prompt` to the session (which may already hold earlier turns) and generates.
// `history` receives prompt and generated tokens (for the repetition penalty).
Result<GenerateStats> generate(runtime::Session& session, std::span<const int32_t> prompt, const GenerateOptions& options,
                               const TokenCallback& on_token, std::vector<int32_t>* history = nullptr);

}  // namespace og::generate
