#include "generate/logprobs.h"

#include <algorithm>
#include <cmath>

namespace og::generate {

TokenLogprob logprob_of(int32_t token, std::span<const float> logits, int32_t top, const tokenizer::Tokenizer& tok) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - mx);
  const double lse = mx + std::log(sum);
  auto text = [&](int32_t id) { return tok.decode(std::span<const int32_t>(&id, 1), false); };
  TokenLogprob out{.token = text(token), .logprob = static_cast<float>(logits[static_cast<size_t>(token)] - lse)};
  if (top > 0) {
    std::vector<int32_t> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    const size_t k = std::min<size_t>(static_cast<size_t>(top), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    for (size_t i = 0; i < k; ++i) out.top.emplace_back(text(ids[i]), static_cast<float>(logits[ids[i]] - lse));
  }
  return out;
}

}  // namespace og::generate
