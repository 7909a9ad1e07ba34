// Log-probabilities of sampled tokens (OpenAI `logprobs` / `top_logprobs`): log_softmax of
// the logits the token was sampled from, in double, and the most likely alternatives.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace og::generate {

struct TokenLogprob {
  std::string token;                                // the token's text (special tokens included)
  float logprob = 0;
  bool unconditioned = false;                       // a prompt's first token: nothing before it, no logprob
  std::vector<std::pair<std::string, float>> top;   // most likely first; ties by lower id
};

// log_softmax(logits)[token] and the `top` most likely tokens (0: none).
TokenLogprob logprob_of(int32_t token, std::span<const float> logits, int32_t top, const tokenizer::Tokenizer& tok);

}  // namespace og::generate
