// Sampling: greedy is argmax; each filter keeps exactly the tokens its definition keeps
// (checked by the empirical distribution over many draws against the computed one).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "generate/sampler.h"

namespace og {
namespace {

using generate::Sampler;
using generate::SamplingParams;

std::map<int32_t, double> frequencies(const SamplingParams& p, const std::vector<float>& logits, int draws = 20000) {
  Sampler s(p);
  std::map<int32_t, double> f;
  for (int i = 0; i < draws; ++i) f[s.sample(logits, {})] += 1.0 / draws;
  return f;
}

// softmax(logits / T) restricted to `keep`, renormalized.
std::map<int32_t, double> expected(const std::vector<float>& logits, float T, const std::vector<int32_t>& keep) {
  std::map<int32_t, double> e;
  double sum = 0;
  for (int32_t i : keep) sum += std::exp(logits[i] / T);
  for (int32_t i : keep) e[i] = std::exp(logits[i] / T) / sum;
  return e;
}

const std::vector<float> kLogits = {1.0f, 3.0f, 2.5f, -1.0f, 0.5f, 2.9f};

TEST(Sampler, GreedyIsArgmax) {
  Sampler s({.temperature = 0});
  EXPECT_EQ(s.sample(kLogits, {}), 1);
}

TEST(Sampler, TopKKeepsTheKLargest) {
  auto f = frequencies({.temperature = 1, .top_k = 3, .top_p = 1, .min_p = 0, .seed = 1}, kLogits);
  auto e = expected(kLogits, 1, {1, 5, 2});
  EXPECT_EQ(f.size(), 3u);
  for (auto [tok, p] : e) EXPECT_NEAR(f[tok], p, 0.015) << tok;
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  // probabilities at T=1: tokens 1 (0.36), 5 (0.33), 2 (0.22), ... -> top_p 0.6 keeps {1, 5}
  auto f = frequencies({.temperature = 1, .top_k = 0, .top_p = 0.6f, .min_p = 0, .seed = 2}, kLogits);
  auto e = expected(kLogits, 1, {1, 5});
  EXPECT_EQ(f.size(), 2u);
  for (auto [tok, p] : e) EXPECT_NEAR(f[tok], p, 0.015) << tok;
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTop) {
  // p(2)/p(1) = e^-0.5 = 0.61, p(0)/p(1) = e^-2 = 0.135 -> min_p 0.5 keeps {1, 5, 2}
  auto f = frequencies({.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0.5f, .seed = 3}, kLogits);
  auto e = expected(kLogits, 1, {1, 5, 2});
  EXPECT_EQ(f.size(), 3u);
  for (auto [tok, p] : e) EXPECT_NEAR(f[tok], p, 0.015) << tok;
}

TEST(Sampler, TemperatureSharpens) {
  auto f = frequencies({.temperature = 0.5f, .top_k = 0, .top_p = 1, .min_p = 0, .seed = 4}, kLogits);
  auto e = expected(kLogits, 0.5f, {0, 1, 2, 3, 4, 5});
  for (auto [tok, p] : e) EXPECT_NEAR(f[tok], p, 0.015) << tok;
}

TEST(Sampler, RepetitionPenaltyFollowsHF) {
  // Token 1 seen: 3.0 / 2 = 1.5 < 2.9 -> greedy picks 5; a negative seen logit is multiplied.
  Sampler s({.temperature = 0, .repetition_penalty = 2.0f});
  std::vector<int32_t> hist = {1};
  EXPECT_EQ(s.sample(kLogits, hist), 5);
  std::vector<float> neg = {-1.0f, -1.5f};
  std::vector<int32_t> seen0 = {0};
  EXPECT_EQ(s.sample(neg, seen0), 1);  // -1 * 2 = -2 < -1.5
}

TEST(Sampler, SameSeedSameTokens) {
  SamplingParams p{.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .seed = 42};
  Sampler a(p), b(p);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.sample(kLogits, {}), b.sample(kLogits, {}));
}

TEST(Sampler, InvalidParametersAreNamed) {
  EXPECT_NE(SamplingParams{.temperature = -1}.validate().message().find("--temp"), std::string::npos);
  EXPECT_NE(SamplingParams{.temperature = NAN}.validate().message().find("--temp"), std::string::npos);
  EXPECT_NE(SamplingParams{.top_p = 0}.validate().message().find("--top-p"), std::string::npos);
  EXPECT_NE(SamplingParams{.top_p = 1.5f}.validate().message().find("--top-p"), std::string::npos);
  EXPECT_NE(SamplingParams{.min_p = -0.1f}.validate().message().find("--min-p"), std::string::npos);
  EXPECT_NE(SamplingParams{.top_k = -2}.validate().message().find("--top-k"), std::string::npos);
  EXPECT_NE(SamplingParams{.repetition_penalty = 0}.validate().message().find("--repeat-penalty"), std::string::npos);
  EXPECT_TRUE(SamplingParams{}.validate().is_ok());
}

}  // namespace
}  // namespace og
