// The cache set: planning on plain integers (slots, bytes, the step clamped to the context),
// and prefix state: a session restored from another's copied prefix continues with logits
// bit-identical to a cold run, for flat caches, rings wrapped before and after the copy,
// KV-shared layers, and every kv dtype.
#include <gtest/gtest.h>

#include "e2e_support.h"
#include "runtime/cache/cache_set.h"

namespace og {
namespace {

using namespace og::testing;

program::CacheLayout two_cache_layout() {
  program::CacheLayout l;
  l.kv_heads = {2, 1};
  l.head_dims = {8, 16};
  l.windows = {0, 4};
  l.layer_to_cache = {0, 1, 1};
  return l;
}

TEST(CacheSetPlan, SlotsAndBytesFollowThePolicies) {
  // Flat: max_ctx_len slots. Ring: W + chunk - 1 = 4 + 8 - 1 = 11 slots.
  auto p = runtime::plan_cache_set(two_cache_layout(), StorageType::kF32, 64, 8);
  ASSERT_EQ(p.n_caches(), 2);
  EXPECT_EQ(p.policies[0].slots, 64);
  EXPECT_FALSE(p.policies[0].ring);
  EXPECT_EQ(p.policies[1].slots, 11);
  EXPECT_TRUE(p.policies[1].ring);
  EXPECT_EQ(p.bytes(), 2u * 64 * 2 * 8 * 4 + 2u * 11 * 1 * 16 * 4);
  auto h = runtime::plan_cache_set(two_cache_layout(), StorageType::kBF16, 64, 8);
  EXPECT_EQ(h.bytes(), p.bytes() / 2);
  // Block-quantized rows: GGUF's 34 (q8_0) and 18 (q4_0) bytes per 32 values; a row of 8 or
  // 16 values still takes a whole block.
  EXPECT_EQ(runtime::plan_cache_set(two_cache_layout(), StorageType::kQ8_0, 64, 8).bytes(),
            2u * 64 * 2 * 34 + 2u * 11 * 1 * 34);
  EXPECT_EQ(runtime::plan_cache_set(two_cache_layout(), StorageType::kQ4_0, 64, 8).bytes(),
            2u * 64 * 2 * 18 + 2u * 11 * 1 * 18);
}

// Bytes per position at the head sizes of real models (Llama-3.2-1B: 8 kv heads of 64;
// gemma-3-1b: 1 of 256; gemma-4's 512): q8_0 0.27x and q4_0 0.15x of fp32 at most.
TEST(CacheSetPlan, QuantizedRowsTakeAQuarterAndAnEighthOfFp32) {
  for (int32_t D : {64, 128, 256, 512}) {
    program::CacheLayout l;
    l.kv_heads = {8};
    l.head_dims = {D};
    l.windows = {0};
    l.layer_to_cache = {0};
    const double f32 = static_cast<double>(runtime::plan_cache_set(l, StorageType::kF32, 16, 8).position_bytes());
    const double q8 = static_cast<double>(runtime::plan_cache_set(l, StorageType::kQ8_0, 16, 8).position_bytes());
    const double q4 = static_cast<double>(runtime::plan_cache_set(l, StorageType::kQ4_0, 16, 8).position_bytes());
    EXPECT_DOUBLE_EQ(q8 / f32, 34.0 / 128) << D;
    EXPECT_DOUBLE_EQ(q4 / f32, 18.0 / 128) << D;
    EXPECT_LE(q8 / f32, 0.27);
    EXPECT_LE(q4 / f32, 0.15);
  }
}

TEST(CacheSetPlan, StepIsClampedToTheContext) {
  // A 6-token context cannot take an 8-token step: the ring would be 4 + 6 - 1 = 9 >= 6
  // slots, so the sliding cache is flat with 6 slots (not 4 + 8 - 1 = 11).
  auto p = runtime::plan_cache_set(two_cache_layout(), StorageType::kF32, 6, 8);
  EXPECT_EQ(p.chunk, 6);
  EXPECT_EQ(p.policies[1].slots, 6);
  EXPECT_FALSE(p.policies[1].ring);
  EXPECT_EQ(p.bytes(), 2u * 6 * 2 * 8 * 4 + 2u * 6 * 1 * 16 * 4);
}

struct PrefixCase {
  std::string family;
  StorageType kv;
};

class PrefixState : public ::testing::TestWithParam<PrefixCase> {};

// Feeds ids[from, to) in steps of `chunk`, returning all logits rows.
std::vector<float> feed(runtime::Session& s, const std::vector<int32_t>& ids, size_t from, size_t to, size_t chunk) {
  std::vector<float> out;
  for (size_t t = from; t < to; t += chunk) {
    auto l = s.append(std::span<const int32_t>(ids.data() + t, std::min(chunk, to - t)));
    EXPECT_TRUE(l.is_ok()) << l.status().message();
    if (l.is_ok()) out.insert(out.end(), l->begin(), l->end());
  }
  return out;
}

TEST_P(PrefixState, RestoredPrefixContinuesBitIdenticalToAColdRun) {
  const auto& c = GetParam();
  auto g = generate({.family = c.family, .seed = 31});
  auto m = runtime::Model::load(export_to(*g, "p.ogp", "fp32", 8, 64));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const auto ids = test_tokens(40, (*m)->vocab_size(), 5);
  auto make = [&] {
    auto s = runtime::Session::create(*m, {.kv_dtype = c.kv, .threads = 1});
    EXPECT_TRUE(s.is_ok());
    return std::move(*s);
  };
  // Snapshots at 13 and 27: every ring (at most 8 + 8 - 1 = 15 slots here) has wrapped by 27.
  for (size_t L : {size_t{13}, size_t{27}}) {
    auto donor = make();
    feed(*donor, ids, 0, L, 4);
    auto state = donor->copy_prefix(static_cast<int64_t>(L));
    ASSERT_TRUE(state.is_ok()) << state.status().message();
    feed(*donor, ids, L, 40, 8);  // the donor moves on: its rings wrap after the copy
    auto restored = make();
    ASSERT_TRUE(restored->append(std::vector<int32_t>{3, 4}).is_ok());  // old contents are overwritten
    ASSERT_TRUE(restored->restore_prefix(*state).is_ok());
    EXPECT_EQ(restored->length(), static_cast<int64_t>(L));
    auto cold = make();
    feed(*cold, ids, 0, L, 4);
    EXPECT_EQ(feed(*restored, ids, L, 40, 3), feed(*cold, ids, L, 40, 3)) << "prefix " << L;
  }
}

INSTANTIATE_TEST_SUITE_P(Caches, PrefixState,
                         ::testing::Values(PrefixCase{"llama", StorageType::kF32},
                                           PrefixCase{"gemma3_text", StorageType::kF32},
                                           PrefixCase{"gemma3_text", StorageType::kBF16},
                                           PrefixCase{"gemma4", StorageType::kF32},
                                           PrefixCase{"gemma3n", StorageType::kF16},
                                           PrefixCase{"mistral", StorageType::kBF16},
                                           PrefixCase{"gemma3_text", StorageType::kQ8_0},
                                           PrefixCase{"gemma3n", StorageType::kQ4_0}),
                         [](const auto& info) {
                           return info.param.family + "_" + std::string(storage_type_tag(info.param.kv));
                         });

TEST(PrefixStateRules, ShorterPrefixOfFlatCachesButNotOfOverwrittenRings) {
  auto flat = generate({.family = "llama", .seed = 32});
  auto mf = runtime::Model::load(export_to(*flat, "p.ogp", "fp32", 8, 64));
  ASSERT_TRUE(mf.is_ok());
  const auto ids = test_tokens(30, (*mf)->vocab_size(), 6);
  auto a = runtime::Session::create(*mf, {.threads = 1});
  feed(**a, ids, 0, 30, 8);
  auto st = (*a)->copy_prefix(10);  // flat caches still hold every earlier position
  ASSERT_TRUE(st.is_ok()) << st.status().message();
  auto b = runtime::Session::create(*mf, {.threads = 1});
  ASSERT_TRUE((*b)->restore_prefix(*st).is_ok());
  auto cold = runtime::Session::create(*mf, {.threads = 1});
  feed(**cold, ids, 0, 10, 8);
  EXPECT_EQ(feed(**b, ids, 10, 30, 5), feed(**cold, ids, 10, 30, 5));

  auto ring = generate({.family = "gemma3_text", .seed = 33});
  auto mr = runtime::Model::load(export_to(*ring, "p.ogp", "fp32", 8, 64));
  ASSERT_TRUE(mr.is_ok());
  auto r = runtime::Session::create(*mr, {.threads = 1});
  feed(**r, ids, 0, 30, 8);
  auto gone = (*r)->copy_prefix(10);  // the rings were overwritten since position 10
  ASSERT_FALSE(gone.is_ok());
  EXPECT_NE(gone.status().message().find("no longer holds"), std::string::npos) << gone.status().message();
  // Another kv dtype or program geometry is refused, the session unchanged.
  auto here = (*r)->copy_prefix(30);
  ASSERT_TRUE(here.is_ok());
  auto bf = runtime::Session::create(*mr, {.kv_dtype = StorageType::kBF16, .threads = 1});
  EXPECT_FALSE((*bf)->restore_prefix(*here).is_ok());
  EXPECT_EQ((*bf)->length(), 0);
  EXPECT_FALSE((*b)->restore_prefix(*here).is_ok());  // llama's caches: another geometry
  EXPECT_EQ((*b)->length(), 30);
}

}  // namespace
}  // namespace og
