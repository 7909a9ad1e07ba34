// Sampling: greedy is argmax; each filter keeps exactly the tokens its definition keeps
// (checked by the empirical distribution over many draws against the computed one).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include <random>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "constrain/special_marks.h"
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


// logit_bias is added before anything else: -100 takes the argmax away, +100 hands it over.
TEST(Sampler, LogitBiasIsAddedFirst) {
  Sampler ban({.temperature = 0, .logit_bias = {{1, -100.0f}}});
  EXPECT_EQ(ban.sample(kLogits, {}), 5);
  Sampler boost({.temperature = 0, .logit_bias = {{3, 100.0f}, {99, 100.0f}}});
  EXPECT_EQ(boost.sample(kLogits, {}), 3) << "an id outside the vocabulary is ignored";
  auto f = frequencies({.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .seed = 2, .logit_bias = {{0, 2.0f}}}, kLogits);
  std::vector<float> biased = kLogits;
  biased[0] += 2.0f;
  for (const auto& [t, p] : expected(biased, 1, {0, 1, 2, 3, 4, 5})) EXPECT_NEAR(f[t], p, 0.015) << t;
}

// A toy vocabulary with a grammar: at temperature 1 over random logits every draw stays inside
// the grammar, the end token comes only where the text is whole, and the distribution among
// the allowed tokens is the softmax restricted to them (checked at the first step). (Each
// byte the grammar may need next is also a token of its own, as in every byte-level or
// byte-fallback vocabulary: a mask is exact per token, so a token that starts a key no other
// token can finish would otherwise lead nowhere.)
TEST(Sampler, AGrammarMaskKeepsEveryDrawInsideIt) {
  const std::vector<std::optional<std::string>> bytes = {"{", "}", "\"a\"", ":", "1", "2", " ", "x", "\"", std::nullopt, "a"};
  const int32_t kEnd = 9;
  auto g = constrain::compile_json_schema(nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"a": {"enum": [1, 12, 21]}}, "additionalProperties": false})"));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto masks = std::make_shared<const constrain::GrammarMasks>(*g, std::make_shared<const constrain::TokenTrie>(bytes));
  const std::vector<int32_t> ends = {kEnd};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 3);
  std::set<std::string> texts;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Sampler s({.temperature = 1, .top_k = seed % 2 ? 3 : 0, .top_p = seed % 3 ? 0.9f : 1.0f, .min_p = 0, .seed = seed,
               .grammar = masks},
              ends);
    std::string text;
    for (int step = 0; step < 50 && !s.grammar_complete(); ++step) {
      std::vector<float> logits(11);
      for (float& l : logits) l = normal(rng);
      const int32_t t = s.sample(logits, {});
      if (t == kEnd) break;
      text += *bytes[static_cast<size_t>(t)];
    }
    const auto j = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << text;
    ASSERT_TRUE(j.is_object()) << text;
    if (j.contains("a")) EXPECT_TRUE(j["a"] == 1 || j["a"] == 12 || j["a"] == 21) << text;
    EXPECT_LE(j.size(), 1u) << text;
    texts.insert(text);
  }
  EXPECT_GT(texts.size(), 5u) << "the draws vary";
  // After "{": "}", "\"a\"", "\"" and " " (not the end: the text is not whole yet).
  const std::vector<float> logits = {0.5f, 3.0f, 2.0f, 1.0f, 1.0f, 1.0f, -0.5f, 4.0f, 1.0f, 5.0f, 2.0f};
  std::map<int32_t, double> f;
  for (uint64_t seed = 0; seed < 20000; ++seed) {
    Sampler s({.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .seed = seed, .grammar = masks}, ends);
    EXPECT_EQ(s.sample(logits, {}), 0) << "only \"{\" can start the text";
    f[s.sample(logits, {})] += 1.0 / 20000;
  }
  for (const auto& [t, p] : expected(logits, 1, {1, 2, 6, 8})) EXPECT_NEAR(f[t], p, 0.015) << t;
  EXPECT_EQ(f.size(), 4u);
  Sampler greedy({.temperature = 0, .grammar = masks}, ends);
  EXPECT_EQ(greedy.sample(logits, {}), 0);
  EXPECT_EQ(greedy.sample(logits, {}), 1) << "greedy is the argmax of the allowed tokens";
  EXPECT_TRUE(greedy.grammar_complete()) << "after {} nothing can follow";
}

// A lazy grammar (tool_choice auto): the text is free until the trigger token, free again
// never after it; a trigger inside a pause span (reasoning) does not start it. The toy
// vocabulary has a special trigger token (marked bytes) whose plain spelling also exists.
TEST(Sampler, ALazyGrammarStartsAtItsTriggerAndNotInsideReasoning) {
  const std::string call = constrain::mark_special("[C]");
  const std::vector<std::optional<std::string>> bytes = {"a", "b", " ", call, "[C]", "{", "}", "\"x\"", ":", "1", "2",
                                                         constrain::mark_special("<t>"), constrain::mark_special("</t>"),
                                                         "f", std::nullopt};
  const int32_t kTrigger = 3, kOpen = 11, kClose = 12, kEnd = 14;
  constrain::FramedJson spec;
  spec.frames.push_back({{.text = call + "f"},
                         {.kind = constrain::FramePiece::Kind::kJson,
                          .schema = nlohmann::ordered_json::parse(R"({"type": "object", "properties": {"x": {"enum": [1, 2]}},
                                                                      "required": ["x"], "additionalProperties": false})")}});
  spec.max_items = 1;
  auto g = constrain::compile_framed_json(spec);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto masks = std::make_shared<const constrain::GrammarMasks>(*g, std::make_shared<const constrain::TokenTrie>(bytes));
  const std::vector<int32_t> ends = {kEnd};
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0, 2);
  int triggered = 0, paused_triggers = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const bool starts_paused = seed % 4 == 0;
    Sampler s({.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .seed = seed, .grammar = masks,
               .grammar_trigger = call, .grammar_pause_open = constrain::mark_special("<t>"),
               .grammar_pause_close = constrain::mark_special("</t>"), .grammar_starts_paused = starts_paused},
              ends);
    std::string text;
    std::vector<int32_t> ids;
    for (int step = 0; step < 40 && !s.grammar_complete(); ++step) {
      std::vector<float> logits(15);
      for (float& l : logits) l = normal(rng);
      logits[kTrigger] += 1.0f;
      const int32_t t = s.sample(logits, {});
      if (t == kEnd) break;
      ids.push_back(t);
      text += *bytes[static_cast<size_t>(t)];
    }
    // Where a trigger comes outside a pause span, the text from it on is the grammar's.
    bool paused = starts_paused;
    size_t first = std::string::npos;
    for (size_t i = 0; i < ids.size() && first == std::string::npos; ++i) {
      if (ids[i] == kOpen) paused = true;
      else if (ids[i] == kClose) paused = false;
      else if (ids[i] == kTrigger && !paused) first = i;
      else if (ids[i] == kTrigger) ++paused_triggers;
    }
    if (first == std::string::npos || first + 1 == ids.size()) continue;  // (none, or the last draw)
    ++triggered;
    std::string tail;
    for (size_t i = first; i < ids.size(); ++i) tail += *bytes[static_cast<size_t>(ids[i])];
    ASSERT_TRUE(tail.starts_with(call + "f")) << ::testing::PrintToString(tail) << " seed " << seed << " first " << first;
    const auto j = nlohmann::json::parse(tail.substr(call.size() + 1), nullptr, false);
    if (s.grammar_complete()) {
      ASSERT_TRUE(j.is_object()) << tail;
      EXPECT_TRUE(j["x"] == 1 || j["x"] == 2) << tail;
    }
  }
  EXPECT_GT(triggered, 50);
  EXPECT_GT(paused_triggers, 5) << "some triggers came inside a pause span and were ignored";
}

// A required lazy grammar (response_format after the reasoning a template opens): the end id
// is refused until the trigger has come, however likely; after it, the end comes only where
// the grammar's text is whole. Without `grammar_required` the same logits end at once.
TEST(Sampler, ARequiredLazyGrammarIsReachedBeforeTheEnd) {
  const std::string close = constrain::mark_special("</t>");
  const std::vector<std::optional<std::string>> bytes = {"a", "b", close, "\n\n", "1", "2", std::nullopt};
  const int32_t kEnd = 6;
  constrain::FramedJson spec;
  spec.lead = close + "\n\n";
  spec.frames.push_back({{.kind = constrain::FramePiece::Kind::kJson,
                          .schema = nlohmann::ordered_json::parse(R"({"enum": [1, 2]})")}});
  spec.max_items = 1;
  auto g = constrain::compile_framed_json(spec);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto masks = std::make_shared<const constrain::GrammarMasks>(*g, std::make_shared<const constrain::TokenTrie>(bytes));
  const std::vector<int32_t> ends = {kEnd};
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0, 1);
  int reached = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Sampler s({.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .seed = seed, .grammar = masks,
               .grammar_trigger = close, .grammar_required = true},
              ends);
    std::string text;
    for (int step = 0; step < 60; ++step) {
      std::vector<float> logits(7);
      for (float& l : logits) l = normal(rng);
      logits[kEnd] += 4.0f;  // the end is the likeliest token at every step
      const int32_t t = s.sample(logits, {});
      if (t == kEnd) break;
      text += *bytes[static_cast<size_t>(t)];
    }
    const size_t at = text.find(close);
    if (at == std::string::npos) continue;  // still reasoning after 60 tokens
    ++reached;
    EXPECT_TRUE(text.substr(at) == close + "\n\n1" || text.substr(at) == close + "\n\n2") << ::testing::PrintToString(text);
  }
  EXPECT_GT(reached, 150);
  Sampler free({.temperature = 0, .grammar = masks, .grammar_trigger = close}, ends);
  std::vector<float> logits(7, 0.0f);
  logits[kEnd] = 4.0f;
  EXPECT_EQ(free.sample(logits, {}), kEnd);
  Sampler required({.temperature = 0, .grammar = masks, .grammar_trigger = close, .grammar_required = true}, ends);
  EXPECT_NE(required.sample(logits, {}), kEnd);
}

}  // namespace
}  // namespace og
