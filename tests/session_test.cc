// Sessions on one loaded program: independence, rewind, and step validation that leaves
// a session unchanged when it refuses a step.
#include <gtest/gtest.h>

#include "e2e_support.h"
#include "runtime/cache/cache_policy.h"

namespace og {
namespace {

using namespace og::testing;

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Gemma-3 with window 4 and a 4-token chunk: rings of 7 slots wrap often.
    gen_ = generate({.family = "gemma3_text", .seed = 5});
    auto m = runtime::Model::load(export_to(*gen_, "p.ogp", "fp32", 4, 64));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    model_ = *m;
  }
  std::unique_ptr<runtime::Session> session() {
    auto s = runtime::Session::create(model_);
    EXPECT_TRUE(s.is_ok());
    return std::move(*s);
  }
  std::vector<float> feed(runtime::Session& s, const std::vector<int32_t>& ids, int64_t chunk) {
    std::vector<float> out;
    for (size_t t = 0; t < ids.size(); t += static_cast<size_t>(chunk)) {
      size_t n = std::min<size_t>(static_cast<size_t>(chunk), ids.size() - t);
      auto l = s.append(std::span<const int32_t>(ids.data() + t, n));
      EXPECT_TRUE(l.is_ok()) << l.status().message();
      if (l.is_ok()) out.insert(out.end(), l->begin(), l->end());
    }
    return out;
  }
  std::unique_ptr<Generated> gen_;
  std::shared_ptr<const runtime::Model> model_;
};

TEST_F(SessionTest, InterleavedSessionsGiveTheSameLogitsAsEachAlone) {
  const auto a_ids = test_tokens(21, model_->vocab_size(), 1), b_ids = test_tokens(21, model_->vocab_size(), 2);
  auto alone_a = session(), alone_b = session();
  const auto want_a = feed(*alone_a, a_ids, 3), want_b = feed(*alone_b, b_ids, 3);
  auto a = session(), b = session();
  std::vector<float> got_a, got_b;
  for (size_t t = 0; t < a_ids.size(); t += 3) {
    auto la = a->append(std::span<const int32_t>(a_ids.data() + t, 3));
    ASSERT_TRUE(la.is_ok());
    got_a.insert(got_a.end(), la->begin(), la->end());
    auto lb = b->append(std::span<const int32_t>(b_ids.data() + t, 3));
    ASSERT_TRUE(lb.is_ok());
    got_b.insert(got_b.end(), lb->begin(), lb->end());
  }
  EXPECT_EQ(got_a, want_a);
  EXPECT_EQ(got_b, want_b);
}

TEST_F(SessionTest, RewindThenRefeedReproducesLogits) {
  const auto ids = test_tokens(20, model_->vocab_size(), 3);
  auto s = session();
  const auto first = feed(*s, ids, 4);
  const int64_t V = model_->vocab_size();
  // Rewind within what every ring still holds (ring 7 slots, window 4, chunk 4: back to length - 4).
  ASSERT_TRUE(s->rewind(17).is_ok());
  EXPECT_EQ(s->length(), 17);
  auto again = s->append(std::span<const int32_t>(ids.data() + 17, 3));
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(std::vector<float>(again->begin(), again->end()), std::vector<float>(first.begin() + 17 * V, first.end()));
  // Too far back for the rings: refused, length unchanged.
  auto far = s->rewind(5);
  ASSERT_FALSE(far.is_ok());
  EXPECT_NE(far.message().find("no longer holds"), std::string::npos);
  EXPECT_EQ(s->length(), 20);
  s->clear();
  EXPECT_EQ(feed(*s, ids, 4), first);
}

TEST_F(SessionTest, RefusedStepsLeaveTheSessionUnchanged) {
  const auto ids = test_tokens(8, model_->vocab_size(), 4);
  auto s = session();
  feed(*s, std::vector<int32_t>(ids.begin(), ids.begin() + 4), 4);
  auto expect_refused = [&](std::vector<int32_t> tok, std::vector<int32_t> pos, const std::string& needle) {
    auto r = s->step(tok, pos);
    ASSERT_FALSE(r.is_ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
    EXPECT_EQ(s->length(), 4);
  };
  expect_refused({1, 2}, {5, 6}, "must continue");               // skips position 4
  expect_refused({1, 2}, {3, 4}, "must continue");               // repeats position 3
  expect_refused({1, 2}, {4, 6}, "contiguous");
  expect_refused({1, 2, 3, 4, 5}, {4, 5, 6, 7, 8}, "exceeds prefill_chunk_size");
  expect_refused({1, model_->vocab_size()}, {4, 5}, "outside the vocabulary");
  expect_refused({1, -1}, {4, 5}, "outside the vocabulary");
  expect_refused({}, {}, "no tokens");
  expect_refused({1}, {4, 5}, "positions");
  // The session continues exactly as if nothing had happened.
  auto fresh = session();
  const auto want = feed(*fresh, ids, 4);
  const auto got = feed(*s, std::vector<int32_t>(ids.begin() + 4, ids.end()), 4);
  EXPECT_EQ(got, std::vector<float>(want.begin() + 4 * model_->vocab_size(), want.end()));
}

TEST_F(SessionTest, ContextOverflowIsRefused) {
  auto s = session();
  const auto ids = test_tokens(64, model_->vocab_size(), 6);
  feed(*s, ids, 4);
  EXPECT_EQ(s->length(), 64);
  auto r = s->append(std::vector<int32_t>{1});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("max_ctx_len 64"), std::string::npos);
  EXPECT_EQ(s->length(), 64);
}

TEST_F(SessionTest, LastRowLogitsEqualTheLastRowOfAllLogits) {
  const auto ids = test_tokens(4, model_->vocab_size(), 8);
  auto a = session(), b = session();
  auto all = a->append(ids, runtime::LogitsRows::kAll);
  auto last = b->append(ids, runtime::LogitsRows::kLast);
  ASSERT_TRUE(all.is_ok() && last.is_ok());
  const int64_t V = model_->vocab_size();
  EXPECT_EQ(std::vector<float>(last->begin(), last->end()), std::vector<float>(all->end() - V, all->end()));
}

TEST(CachePolicy, SlidingCachesAreRingsOfWindowPlusChunkMinusOne) {
  auto p = runtime::plan_cache(512, 4096, 128);
  EXPECT_TRUE(p.ring);
  EXPECT_EQ(p.slots, 512 + 128 - 1);
  auto flat = runtime::plan_cache(0, 4096, 128);
  EXPECT_FALSE(flat.ring);
  EXPECT_EQ(flat.slots, 4096);
  auto small_ctx = runtime::plan_cache(512, 600, 128);  // ring would exceed the context: flat
  EXPECT_FALSE(small_ctx.ring);
  EXPECT_EQ(small_ctx.slots, 600);
}

TEST(CachePolicy, ChunkNeverOverwritesKeysItStillNeeds) {
  // Simulate slot ownership on integers: every step writes T positions, then each query
  // p in the step reads keys p - W + 1 .. p, which must all still be in their slots.
  for (int64_t W : {1, 2, 4, 7}) {
    for (int64_t C : {1, 2, 3, 8}) {
      auto p = runtime::plan_cache(W, 1000, C);
      std::vector<int64_t> slot_pos(static_cast<size_t>(p.slots), -1);
      int64_t len = 0;
      for (int64_t T : std::vector<int64_t>{C, 1, C, std::max<int64_t>(C - 1, 1), C, C, 1, C, C}) {
        for (int64_t t = 0; t < T; ++t) slot_pos[(len + t) % p.slots] = len + t;
        for (int64_t q = len; q < len + T; ++q)
          for (int64_t j = std::max<int64_t>(0, q - W + 1); j <= q; ++j)
            EXPECT_EQ(slot_pos[j % p.slots], j) << "W " << W << " C " << C << " query " << q;
        len += T;
      }
    }
  }
}

TEST(CachePolicy, RewindOnlyAsFarAsEveryRingHolds) {
  std::vector<runtime::CachePolicy> caches = {runtime::plan_cache(0, 100, 4), runtime::plan_cache(4, 100, 4)};
  EXPECT_TRUE(runtime::check_rewind(20, 20, caches).is_ok());
  EXPECT_TRUE(runtime::check_rewind(20, 16, caches).is_ok());   // needs 13..15, ring holds 13..19
  EXPECT_FALSE(runtime::check_rewind(20, 15, caches).is_ok());  // needs 12
  EXPECT_TRUE(runtime::check_rewind(5, 2, caches).is_ok());     // nothing overwritten yet
  EXPECT_FALSE(runtime::check_rewind(20, 21, caches).is_ok());
  EXPECT_FALSE(runtime::check_rewind(20, -1, caches).is_ok());
  EXPECT_TRUE(runtime::check_rewind(20, 0, {runtime::plan_cache(0, 100, 4)}).is_ok());
}

}  // namespace
}  // namespace og
