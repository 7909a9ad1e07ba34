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

// A cache whose V is K's memory (layout value_is_key) moves one copy: its prefix states and
// files hold each row once, and either form reads into either kind of cache (same layout with
// and without the flag): one copy into two gives V the K rows, two into one keeps K.
TEST(CacheSetPlan, OneCopyCachesMoveOneCopyIntoEitherKind) {
  program::CacheLayout one = two_cache_layout();
  one.windows = {0, 0};
  one.value_is_key = {1, 0};
  program::CacheLayout two = one;
  two.value_is_key.clear();
  auto p1 = runtime::plan_cache_set(one, StorageType::kF32, 16, 8), p2 = runtime::plan_cache_set(two, StorageType::kF32, 16, 8);
  EXPECT_EQ(p1.bytes(), p2.bytes() - 16 * p2.row_bytes(0));
  EXPECT_EQ(p1.position_bytes(), p2.position_bytes() - p2.row_bytes(0));
  auto a = runtime::CacheSet::create(p1), b = runtime::CacheSet::create(p2);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  // Rows of 5 positions: cache 0 K (= V in a), cache 1 K and V, each value distinct.
  const int64_t n = 5;
  auto fill = [&](const kernels::KvStorage& kv, float base, bool v) {
    auto* d = static_cast<float*>(v ? kv.v : kv.k);
    for (int32_t h = 0; h < kv.kv_heads; ++h)
      for (int64_t r = 0; r < n; ++r)
        for (int32_t i = 0; i < kv.head_dim; ++i) d[(h * kv.slots + r) * kv.head_dim + i] = base + static_cast<float>((h * 100 + r) * 100 + i);
  };
  auto rows_of = [&](const kernels::KvStorage& kv, bool v) {
    std::vector<float> out;
    const auto* d = static_cast<const float*>(v ? kv.v : kv.k);
    for (int32_t h = 0; h < kv.kv_heads; ++h)
      out.insert(out.end(), d + h * kv.slots * kv.head_dim, d + (h * kv.slots + n) * kv.head_dim);
    return out;
  };
  for (auto* set : {&*a, &*b}) {
    fill(set->storage(0), 0, false);
    if (set == &*b) fill(set->storage(0), 0, true);  // two copies of the same rows
    fill(set->storage(1), 1e6f, false);
    fill(set->storage(1), 2e6f, true);
  }
  const std::vector<float> k0 = rows_of(a->storage(0), false), k1 = rows_of(a->storage(1), false), v1 = rows_of(a->storage(1), true);
  auto expect_rows = [&](const runtime::CacheSet& set, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(rows_of(set.storage(0), false), k0);
    EXPECT_EQ(rows_of(set.storage(0), true), k0);
    EXPECT_EQ(rows_of(set.storage(1), false), k1);
    EXPECT_EQ(rows_of(set.storage(1), true), v1);
  };
  const runtime::PrefixState s1 = a->copy_prefix(n), s2 = b->copy_prefix(n);
  EXPECT_EQ(s1.bytes(), s2.bytes() - n * p2.row_bytes(0));
  EXPECT_EQ(s1.bytes(), n * p1.position_bytes());
  auto a2 = runtime::CacheSet::create(p1), b2 = runtime::CacheSet::create(p2);
  ASSERT_TRUE(b2->restore_prefix(s1).is_ok());
  expect_rows(*b2, "one-copy state into two copies");
  ASSERT_TRUE(a2->restore_prefix(s2).is_ok());
  expect_rows(*a2, "two-copy state into one copy");
  // Files: the one-copy file is a row-set smaller and each reads into the other kind.
  TempDir dir;
  ASSERT_TRUE(a->save(dir.file("a.kv"), 7, n).is_ok());
  ASSERT_TRUE(b->save(dir.file("b.kv"), 7, n).is_ok());
  // (b.kv is version 2, a.kv version 3 with a 4-byte copy count per cache.)
  EXPECT_EQ(std::filesystem::file_size(dir.file("a.kv")), std::filesystem::file_size(dir.file("b.kv")) + 2 * 4 - n * p2.row_bytes(0));
  auto a3 = runtime::CacheSet::create(p1), b3 = runtime::CacheSet::create(p2);
  ASSERT_TRUE(b3->load(dir.file("a.kv"), 7).is_ok());
  expect_rows(*b3, "one-copy file into two copies");
  ASSERT_TRUE(a3->load(dir.file("b.kv"), 7).is_ok());
  expect_rows(*a3, "two-copy file into one copy");
  // A prefix state's file: one copy in, one copy out, the same rows.
  const std::vector<int32_t> tokens(n, 1);
  ASSERT_TRUE(runtime::save_prefix_state(dir.file("s.kv"), 7, s1, tokens).is_ok());
  auto back = runtime::load_prefix_state(dir.file("s.kv"), 7, StorageType::kF32);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->state.bytes(), s1.bytes());
  EXPECT_TRUE(back->state.caches[0].one_copy);
  EXPECT_FALSE(back->state.caches[1].one_copy);
  auto b4 = runtime::CacheSet::create(p2);
  ASSERT_TRUE(b4->restore_prefix(back->state).is_ok());
  expect_rows(*b4, "one-copy state file into two copies");
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
