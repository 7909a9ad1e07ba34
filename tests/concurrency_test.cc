// Many sessions stepping on one loaded program from several threads at once give exactly
// the results they give alone (8 threads x 4 sessions, greedy decode of different prompts).
#include <gtest/gtest.h>

#include <thread>

#include "e2e_support.h"
#include "generate/generator.h"

namespace og {
namespace {

using namespace og::testing;

struct Outcome {
  std::vector<int32_t> tokens;
  std::vector<float> last_logits;
};

Outcome decode(const std::shared_ptr<const runtime::Model>& model, const std::vector<int32_t>& prompt) {
  Outcome o;
  auto s = runtime::Session::create(model);
  EXPECT_TRUE(s.is_ok());
  generate::GenerateOptions opts{.max_tokens = 12, .sampling = {.temperature = 0}};
  auto stats = generate::generate(**s, prompt, opts, [&](int32_t t) {
    o.tokens.push_back(t);
    return true;
  });
  EXPECT_TRUE(stats.is_ok()) << stats.status().message();
  auto last = (*s)->append(std::vector<int32_t>{o.tokens.back()}, runtime::LogitsRows::kLast);
  EXPECT_TRUE(last.is_ok());
  if (last.is_ok()) o.last_logits.assign(last->begin(), last->end());
  return o;
}

TEST(Concurrency, EightThreadsTimesFourSessionsMatchEachAlone) {
  auto g = og::testing::generate({.family = "gemma3_text", .seed = 31});
  auto model = runtime::Model::load(export_to(*g, "p.ogp", "fp32", 4, 128));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  constexpr int kThreads = 8, kPerThread = 4;
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < kThreads * kPerThread; ++i)
    prompts.push_back(test_tokens(5 + i % 7, g->config.vocab_size, static_cast<uint32_t>(100 + i)));
  std::vector<Outcome> alone;
  for (const auto& p : prompts) alone.push_back(decode(*model, p));

  std::vector<Outcome> together(prompts.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) {
        const size_t i = static_cast<size_t>(t * kPerThread + k);
        together[i] = decode(*model, prompts[i]);
      }
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together[i].tokens, alone[i].tokens) << "session " << i;
    EXPECT_EQ(together[i].last_logits, alone[i].last_logits) << "session " << i;
  }
}

}  // namespace
}  // namespace og
