// Token sampling from logits, as HF generate() orders its processors: repetition penalty,
// then OpenAI's presence/frequency penalties, temperature, top-k, top-p and min-p;
// temperature 0 is greedy (argmax).
// Deterministic for a given seed on every platform (own uniform from mt19937_64 bits).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"

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

  // Every out-of-range or NaN value is an error naming the parameter.
  Status validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  // Picks the next token from logits [vocab], given the tokens so far (prompt + generated).
  // Every token returned counts as generated for the presence/frequency penalties.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

 private:
  int32_t pick(std::span<const float> logits, std::span<const int32_t> history);
  double uniform();  // [0, 1)
  std::unordered_map<int32_t, int32_t> generated_counts_;  // token -> times returned
  SamplingParams p_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused: no allocation per token
  std::vector<float> scratch_;
};

}  // namespace og::generate
