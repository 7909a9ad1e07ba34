#include "generate/generator.h"

#include "generate/stop_rules.h"

#include <algorithm>
#include <chrono>

namespace og::generate {

Result<GenerateStats> generate(runtime::Session& session, std::span<const int32_t> prompt, const GenerateOptions& o,
                               const TokenCallback& on_token, std::vector<int32_t>* history_out) {
  OG_TRY(o.sampling.validate());
  if (prompt.empty()) return bad_input("the prompt has no tokens");
  if (session.length() + static_cast<int64_t>(prompt.size()) > session.max_ctx_len())
    return bad_input("prompt of {} tokens does not fit: {} of {} context positions are used", prompt.size(),
                     session.length(), session.max_ctx_len());
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  std::vector<int32_t> local_history;
  std::vector<int32_t>& history = history_out ? *history_out : local_history;
  history.insert(history.end(), prompt.begin(), prompt.end());

  GenerateStats stats;
  stats.prompt_tokens = static_cast<int64_t>(prompt.size());
  const size_t chunk = static_cast<size_t>(session.model().prefill_chunk_size());
  const auto start = Clock::now();
  std::span<const float> logits;
  for (size_t t = 0; t < prompt.size(); t += chunk) {
    const size_t n = std::min(chunk, prompt.size() - t);
    OG_ASSIGN_OR_RETURN(logits, session.append(prompt.subspan(t, n), runtime::LogitsRows::kLast));
  }
  const auto prefilled = Clock::now();
  stats.prefill_seconds = seconds(start, prefilled);

  Sampler sampler(o.sampling, o.stop_ids);
  Clock::time_point first_token_at = prefilled;
  for (;;) {  // one token's turn: generate/stop_rules.h
    if (max_tokens_reached(o, stats.generated_tokens)) {
      stats.stop = StopReason::kMaxTokens;
      break;
    }
    const int32_t token = sampler.sample(logits, history);
    if (stats.generated_tokens == 0) {
      first_token_at = Clock::now();
      stats.first_token_seconds = seconds(start, first_token_at);
    }
    if (is_stop_id(o, token)) {
      stats.stop = StopReason::kStopToken;
      break;
    }
    history.push_back(token);
    ++stats.generated_tokens;
    if (!on_token(token)) {
      stats.stop = StopReason::kCallback;
      break;
    }
    if (auto why = stop_after(o, stats.generated_tokens, session.length(), session.max_ctx_len(), sampler.grammar_complete())) {
      stats.stop = *why;
      break;
    }
    // Feed the token back: the session holds every generated token except the last one,
    // which enters at the next turn (or here, for the next step).
    OG_ASSIGN_OR_RETURN(logits, session.append(std::span<const int32_t>(&history.back(), 1), runtime::LogitsRows::kLast));
  }
  stats.decode_seconds = seconds(first_token_at, Clock::now());
  return stats;
}

}  // namespace og::generate
