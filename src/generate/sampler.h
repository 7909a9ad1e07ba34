// Token sampling from logits, as HF generate() orders its processors: repetition penalty,
// then OpenAI's presence/frequency penalties, temperature, top-k, top-p and min-p;
// temperature 0 is greedy (argmax). Before all of them come OpenAI's logit_bias and then a
// grammar's mask (constrain/): a token the grammar refuses is never picked, and every rule
// after sees the masked distribution.
// Deterministic for a given seed on every platform (own uniform from mt19937_64 bits).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "constrain/matcher.h"
#include "constrain/token_mask.h"

namespace og::generate {

struct SamplingParams {
  float temperature = 0.8f;        // 0: greedy
  int32_t top_k = 40;              // 0: off
  float top_p = 0.95f;             // 1: off; must be in (0, 1]
  float min_p = 0.05f;             // 0: off; in [0, 1]
  float repetition_penalty = 1.0f; // 1: off; > 0
  int32_t repeat_last_n = 64;      // tokens the penalty looks back over (-1: all)
  // OpenAI semantics over the tokens this sampler has generated (not the prompt):
  // logit[t] -= presence_penalty * (count[t] > 0) + frequency_penalty * count[t]. In [-2, 2].
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0;
  // OpenAI's logit_bias: added to a token's logit before anything else (-100 bans, 100 all but
  // forces). Ids outside the vocabulary are ignored.
  std::vector<std::pair<int32_t, float>> logit_bias;
  // The text must be a sentence of this grammar (response_format, --json-schema); null: free.
  std::shared_ptr<const constrain::GrammarMasks> grammar;
  // A lazy grammar (tool_choice auto): the text is free until it holds `grammar_trigger` (the
  // grammar's own first bytes, special tokens marked), and follows the grammar from the
  // trigger's first byte on. A trigger between grammar_pause_open and grammar_pause_close
  // (reasoning) does not count; grammar_starts_paused: the text begins inside such a span.
  std::string grammar_trigger, grammar_pause_open, grammar_pause_close;
  bool grammar_starts_paused = false;
  // A lazy grammar the text must reach: the end ids are refused until its trigger has come
  // (free reasoning first, then an answer the grammar holds: response_format after </think>).
  bool grammar_required = false;
  // The end ids are refused until this many tokens have been sampled (vLLM's min_tokens).
  int32_t min_tokens = 0;

  // Every out-of-range or NaN value is an error naming the parameter.
  Status validate() const;
};

class Sampler {
 public:
  // `end_ids`: the tokens that end the text (EOS, turn end); under a grammar they may come only
  // where the grammar accepts the text so far.
  explicit Sampler(const SamplingParams& params, std::span<const int32_t> end_ids = {});
  // Picks the next token from logits [vocab], given the tokens so far (prompt + generated).
  // Every token returned counts as generated for the presence/frequency penalties, and is read
  // by the grammar.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
  // Under a grammar: the text is a whole sentence and nothing can follow (only an end id
  // could be sampled next, so the sequence ends now).
  bool grammar_complete() const { return matcher_ && matcher_->accepting() && !matcher_->can_continue(); }

 private:
  int32_t pick(std::span<const float> logits, std::span<const int32_t> history);
  void watch_trigger(int32_t token);  // a lazy grammar not yet started: reads `token`
  double uniform();  // [0, 1)
  std::unordered_map<int32_t, int32_t> generated_counts_;  // token -> times returned
  void constrain(std::span<float> logits);
  SamplingParams p_;
  std::vector<int32_t> end_ids_;
  std::optional<constrain::Matcher> matcher_;
  int64_t sampled_ = 0;      // tokens sampled so far (min_tokens)
  bool waiting_ = false;     // a lazy grammar whose trigger has not come
  bool paused_ = false;      // inside a pause span (reasoning)
  std::string free_text_;    // the text so far while waiting (token bytes, specials marked)
  size_t scan_ = 0;          // free_text_ before this is read
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused: no allocation per token
  std::vector<float> scratch_;
  std::vector<float> biased_;         // the logits after logit_bias and the mask
  std::span<const float> original_;   // the step's own logits (constrain() reads end ids there)
};

}  // namespace og::generate
