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

TEST(Sampler, PresenceAndFrequencyPenaltiesFollowOpenAI) {
  // logit[t] -= presence * (count[t] > 0) + frequency * count[t], counts over the tokens this
  // sampler returned (the prompt in `history` does not count). Greedy on {5, 4.5, 3}:
  const std::vector<float> l = {5.0f, 4.5f, 3.0f};
  const std::vector<int32_t> prompt = {0, 0, 0};
  Sampler presence({.temperature = 0, .presence_penalty = 1.0f});
  EXPECT_EQ(presence.sample(l, prompt), 0);  // nothing generated yet
  EXPECT_EQ(presence.sample(l, prompt), 1);  // {4, 4.5, 3}
  EXPECT_EQ(presence.sample(l, prompt), 0);  // {4, 3.5, 3}: presence does not grow with the count
  Sampler frequency({.temperature = 0, .frequency_penalty = 0.3f});
  EXPECT_EQ(frequency.sample(l, prompt), 0);  // {5, 4.5, 3}
  EXPECT_EQ(frequency.sample(l, prompt), 0);  // {4.7, 4.5, 3}
  EXPECT_EQ(frequency.sample(l, prompt), 1);  // {4.4, 4.5, 3}
  EXPECT_EQ(frequency.sample(l, prompt), 0);  // {4.4, 4.2, 3}
  Sampler negative({.temperature = 0, .presence_penalty = -2.0f});
  const std::vector<float> close = {1.0f, 2.0f};
  EXPECT_EQ(negative.sample(close, {}), 1);
  EXPECT_EQ(negative.sample(std::vector<float>{2.5f, 2.0f}, {}), 1);  // 2 + 2 > 2.5

  // Sampled: the second draw, given the first was token 0, follows softmax(l - 0.5 - 0.25).
  std::map<int32_t, double> second;
  int firsts = 0;
  for (uint64_t seed = 0; seed < 30000; ++seed) {
    Sampler s({.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .presence_penalty = 0.5f,
               .frequency_penalty = 0.25f, .seed = seed});
    if (s.sample(l, {}) != 0) continue;
    ++firsts;
    second[s.sample(l, {})] += 1;
  }
  ASSERT_GT(firsts, 10000);
  const std::vector<float> penalised = {5.0f - 0.75f, 4.5f, 3.0f};
  auto e = expected(penalised, 1, {0, 1, 2});
  for (auto [tok, p] : e) EXPECT_NEAR(second[tok] / firsts, p, 0.015) << tok;
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
  EXPECT_NE(SamplingParams{.presence_penalty = 2.5f}.validate().message().find("presence_penalty"), std::string::npos);
  EXPECT_NE(SamplingParams{.frequency_penalty = -3}.validate().message().find("frequency_penalty"), std::string::npos);
  EXPECT_NE(SamplingParams{.frequency_penalty = NAN}.validate().message().find("frequency_penalty"), std::string::npos);
  EXPECT_TRUE(SamplingParams{}.validate().is_ok());
}

}  // namespace
}  // namespace og
