// Token sampling from logits, as HF generate() orders its processors: repetition penalty,
// then temperature, top-k, top-p and min-p; temperature 0 is greedy (argmax).
// Deterministic for a given seed on every platform (own uniform from mt19937_64 bits).
#pragma once

#include <cstdint>
#include <random>
#include <span>
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
  uint64_t seed = 0;

  // Every out-of-range or NaN value is an error naming the parameter.
  Status validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  // Picks the next token from logits [vocab], given the tokens so far (prompt + generated).
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

 private:
  double uniform();  // [0, 1)
  SamplingParams p_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused: no allocation per token
  std::vector<float> scratch_;
};

}  // namespace og::generate
