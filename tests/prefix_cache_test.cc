// Prefix reuse: the store's lookup rules (flat states serve shorter prefixes, ring snapshots
// only their own length; the budget evicts the least recently used), and through the
// scheduler: a request that shares a prefix with an earlier one restores it and then yields
// logits bit-identical to a cold run, for flat caches, rings, KV-shared layers and kv dtypes,
// with cached_tokens counting what was restored.
#include <gtest/gtest.h>

#include "e2e_support.h"
#include "generate/scheduler.h"
#include "runtime/prefix_cache.h"

namespace og {
namespace {

using namespace og::testing;

std::shared_ptr<const runtime::Model> load(const Generated& g) {
  auto m = runtime::Model::load(export_to(g, "p.ogp", "fp32", 8, 128));
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? *m : nullptr;
}

// A session fed `tokens` in steps of 8 and the state of its first n tokens.
std::shared_ptr<const runtime::PrefixState> state_of(const std::shared_ptr<const runtime::Model>& m,
                                                     const std::vector<int32_t>& tokens, int64_t n) {
  auto s = runtime::Session::create(m, {.threads = 1});
  for (int64_t t = 0; t < n; t += 8)
    EXPECT_TRUE((*s)->append(std::span<const int32_t>(tokens.data() + t, static_cast<size_t>(std::min<int64_t>(8, n - t)))).is_ok());
  auto st = (*s)->copy_prefix(n);
  EXPECT_TRUE(st.is_ok()) << st.status().message();
  return std::make_shared<const runtime::PrefixState>(std::move(*st));
}

std::vector<int32_t> with_tail(std::vector<int32_t> head, const std::vector<int32_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(PrefixCacheStore, FlatStatesServeShorterPrefixesRingSnapshotsOnlyTheirLength) {
  auto flat = testing::generate({.family = "llama", .seed = 51});
  auto ring = testing::generate({.family = "gemma3_text", .seed = 52});
  auto mf = load(*flat), mr = load(*ring);
  const auto a = test_tokens(40, mf->vocab_size(), 1);
  const auto diverging = with_tail(std::vector<int32_t>(a.begin(), a.begin() + 21), {1, 2, 3, 4, 5});
  runtime::PrefixCache fc({.block_tokens = 4});
  fc.insert(a, state_of(mf, a, 40));
  auto hit = fc.lookup(diverging);  // shares 21 tokens: a flat state serves them all
  ASSERT_TRUE(hit.state);
  EXPECT_EQ(hit.length, 21);
  EXPECT_EQ(fc.lookup(a).length, 39);  // never the whole request: its last token must run
  EXPECT_FALSE(fc.lookup(test_tokens(30, mf->vocab_size(), 9)).state);

  runtime::PrefixCache rc({.block_tokens = 4});
  const auto ar = test_tokens(40, mr->vocab_size(), 1);
  rc.insert(ar, state_of(mr, ar, 40));
  EXPECT_FALSE(rc.lookup(with_tail(std::vector<int32_t>(ar.begin(), ar.begin() + 21), {1, 2})).state)
      << "a ring snapshot at 40 cannot serve position 21";
  rc.insert(ar, state_of(mr, ar, 16));  // a snapshot at 16 (tokens beyond it are ignored)
  auto r16 = rc.lookup(with_tail(std::vector<int32_t>(ar.begin(), ar.begin() + 21), {1, 2}));
  ASSERT_TRUE(r16.state);
  EXPECT_EQ(r16.length, 16);
  EXPECT_EQ(rc.lookup(with_tail(ar, {7})).length, 40);  // the request extends the longer one
  const auto c = rc.counters();
  EXPECT_EQ(c.queries, 3u);
  EXPECT_EQ(c.hits, 2u);
  EXPECT_EQ(c.hit_tokens, 56u);
  EXPECT_EQ(c.entries, 2u);
}

TEST(PrefixCacheStore, BudgetEvictsTheLeastRecentlyUsedAndFlatExtensionsReplacePrefixes) {
  auto flat = testing::generate({.family = "llama", .seed = 53});
  auto m = load(*flat);
  const auto a = test_tokens(32, m->vocab_size(), 1), b = test_tokens(32, m->vocab_size(), 2),
             c = test_tokens(32, m->vocab_size(), 3);
  const uint64_t one = state_of(m, a, 32)->bytes();
  runtime::PrefixCache pc({.block_tokens = 8, .budget_bytes = 2 * one + one / 2});  // room for two
  pc.insert(a, state_of(m, a, 32));
  pc.insert(b, state_of(m, b, 32));
  EXPECT_TRUE(pc.lookup(with_tail(a, {1})).state);  // a is now the most recently used
  pc.insert(c, state_of(m, c, 32));                 // evicts b
  EXPECT_FALSE(pc.lookup(with_tail(b, {1})).state);
  EXPECT_TRUE(pc.lookup(with_tail(a, {1})).state);
  EXPECT_TRUE(pc.lookup(with_tail(c, {1})).state);
  EXPECT_EQ(pc.counters().evictions, 1u);
  EXPECT_LE(pc.counters().bytes, 2 * one + one / 2);
  // A flat state extending a stored one replaces it: one entry serves both.
  runtime::PrefixCache ext({.block_tokens = 8});
  ext.insert(a, state_of(m, a, 16));
  ext.insert(a, state_of(m, a, 32));
  EXPECT_EQ(ext.counters().entries, 1u);
  EXPECT_EQ(ext.lookup(with_tail(std::vector<int32_t>(a.begin(), a.begin() + 16), {5})).length, 16);
}

struct Case {
  std::string family;
  runtime::KvDType kv;
};

class PrefixReuse : public ::testing::TestWithParam<Case> {};

struct Served {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> logits;
  int64_t cached = -1;
};

Served serve(generate::Scheduler& s, const std::vector<int32_t>& prompt, int32_t max_tokens) {
  Served out;
  generate::GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampling.temperature = 0;
  auto id = s.submit({.prompt = prompt,
                      .options = o,
                      .on_token = [&](int32_t t, std::span<const float> l) {
                        out.tokens.push_back(t);
                        out.logits.emplace_back(l.begin(), l.end());
                        return true;
                      },
                      .on_done = [&](const Result<generate::SequenceStats>& st) {
                        ASSERT_TRUE(st.is_ok()) << st.status().message();
                        out.cached = st->cached_tokens;
                      }});
  EXPECT_TRUE(id.is_ok()) << id.status().message();
  while (s.step()) {
  }
  return out;
}

TEST_P(PrefixReuse, RestoredPrefixGivesTheLogitsOfAColdRun) {
  const auto& c = GetParam();
  auto g = testing::generate({.family = c.family, .seed = 54});
  auto m = load(*g);
  auto cache = std::make_shared<runtime::PrefixCache>(runtime::PrefixCacheOptions{.block_tokens = 4});
  auto warm = generate::Scheduler::create(
      m, {.max_sequences = 2, .kv_dtype = c.kv, .threads = 1, .prefix_cache = cache, .snapshot_interval = 8});
  auto cold = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1});
  ASSERT_TRUE(warm.is_ok() && cold.is_ok());
  const int64_t V = m->vocab_size();
  const auto system = test_tokens(37, V, 3);  // a shared "system prompt" of 37 tokens
  const auto first = with_tail(system, test_tokens(5, V, 4)), second = with_tail(system, test_tokens(6, V, 5));
  auto a = serve(**warm, first, 6);
  EXPECT_EQ(a.cached, 0);
  // Branching: the second request shares only the system prompt. Flat caches restore all
  // 37 tokens; with rings, the snapshot at 32 (every 8 prompt tokens) is the longest usable.
  auto b = serve(**warm, second, 6);
  bool has_window = false;
  for (int32_t w : m->layout().windows) has_window = has_window || w > 0;
  EXPECT_EQ(b.cached, has_window ? 32 : 37);
  auto b_cold = serve(**cold, second, 6);
  EXPECT_EQ(b.tokens, b_cold.tokens);
  EXPECT_EQ(b.logits, b_cold.logits) << "restored prefix changed the logits";
  // A follow-up turn resending the whole history hits the end-of-reply state.
  auto turn2 = with_tail(first, a.tokens);
  turn2 = with_tail(turn2, test_tokens(4, V, 6));
  auto t = serve(**warm, turn2, 5);
  EXPECT_GE(t.cached, static_cast<int64_t>(first.size() + a.tokens.size()) - 1);
  auto t_cold = serve(**cold, turn2, 5);
  EXPECT_EQ(t.logits, t_cold.logits);
}

INSTANTIATE_TEST_SUITE_P(Caches, PrefixReuse,
                         ::testing::Values(Case{"llama", runtime::KvDType::kF32}, Case{"gemma3_text", runtime::KvDType::kF32},
                                           Case{"gemma3_text", runtime::KvDType::kBF16}, Case{"gemma4", runtime::KvDType::kF32},
                                           Case{"gemma3n", runtime::KvDType::kBF16}, Case{"qwen2", runtime::KvDType::kF32}),
                         [](const auto& info) {
                           return info.param.family + (info.param.kv == runtime::KvDType::kF32 ? "_f32" : "_bf16");
                         });

}  // namespace
}  // namespace og
