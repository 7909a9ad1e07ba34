// Prefix reuse: the store's lookup rules (flat states serve shorter prefixes, ring snapshots
// only their own length unless their session kept the rings' history; the budget evicts the
// least recently used), and through the
// scheduler: a request that shares a prefix with an earlier one restores it and then yields
// logits bit-identical to a cold run, for flat caches, rings, KV-shared layers and kv dtypes,
// with cached_tokens counting what was restored. The disk tier (`serve --cache-dir`): a cache
// re-created on the same directory (a restarted server) restores what the first one stored
// with the logits of a cold run, another program never reads them, damaged files are skipped
// with a warning, and files stay within their budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

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
                                                     const std::vector<int32_t>& tokens, int64_t n,
                                                     bool keep_history = false) {
  auto s = runtime::Session::create(m, {.threads = 1, .keep_history = keep_history});
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
  // A request equal to a stored ring state: its last token must run, so the snapshot at 40
  // cannot serve it; the one at 16 does.
  auto same = rc.lookup(ar);
  ASSERT_TRUE(same.state);
  EXPECT_EQ(same.length, 16);
  // A session that keeps its rings' history (as the scheduler's do with a prefix cache)
  // copies states that hold every row, and so serve any shorter prefix, as flat ones do.
  runtime::PrefixCache hc({.block_tokens = 4});
  hc.insert(ar, state_of(mr, ar, 40, /*keep_history=*/true));
  auto h21 = hc.lookup(with_tail(std::vector<int32_t>(ar.begin(), ar.begin() + 21), {1, 2}));
  ASSERT_TRUE(h21.state);
  EXPECT_EQ(h21.length, 21);
  EXPECT_EQ(hc.lookup(ar).length, 39);
}

// Two states hold the same positions with the same bytes. (The caller's line comes as an
// argument: clang 14, the address sanitizer lane's compiler, has no std::source_location.)
void expect_same_state(const runtime::PrefixState& x, const runtime::PrefixState& y, int line) {
  SCOPED_TRACE(::testing::Message() << "compared at line " << line);
  ASSERT_EQ(x.length, y.length);
  ASSERT_EQ(x.caches.size(), y.caches.size());
  for (size_t c = 0; c < x.caches.size(); ++c) {
    SCOPED_TRACE(c);
    EXPECT_EQ(x.caches[c].first, y.caches[c].first);
    EXPECT_EQ(x.caches[c].rows, y.caches[c].rows);
    EXPECT_TRUE(std::ranges::equal(x.caches[c].k, y.caches[c].k) && std::ranges::equal(x.caches[c].v, y.caches[c].v));
  }
}

// A session keeping its rings' history copies the same state whatever its way there: fed
// straight, rewound and fed again, restored from a state (copied or borrowed); a loaded save file (which holds
// only a ring's slots) serves what those slots reach and refuses what they do not.
TEST(PrefixCacheStore, KeptHistoryFollowsRewindsRestoresAndLoads) {
  auto g = testing::generate({.family = "gemma3_text", .seed = 62});
  auto m = load(*g);
  const int64_t V = m->vocab_size();
  const auto a = test_tokens(37, V, 7);
  const auto straight = state_of(m, a, 37, true);
  for (const auto& pc : straight->caches) EXPECT_EQ(pc.first, 0);
  auto feed = [&](runtime::Session& s, std::span<const int32_t> t) {
    for (size_t i = 0; i < t.size(); i += 8) ASSERT_TRUE(s.append(t.subspan(i, std::min<size_t>(8, t.size() - i))).is_ok());
  };
  auto x = runtime::Session::create(m, {.threads = 1, .keep_history = true});
  ASSERT_TRUE(x.is_ok());
  feed(**x, std::span(a).first(27));
  feed(**x, test_tokens(3, V, 8));  // three tokens the sequence then takes back
  ASSERT_TRUE((*x)->rewind(27).is_ok());
  feed(**x, std::span(a).subspan(27));
  expect_same_state(*(*x)->copy_prefix(37), *straight, __LINE__);
  expect_same_state(*(*x)->copy_prefix(10), *state_of(m, a, 10, true), __LINE__);
  auto y = runtime::Session::create(m, {.threads = 1, .keep_history = true});
  ASSERT_TRUE((*y)->restore_prefix(*straight, 20).is_ok());
  feed(**y, std::span(a).subspan(20));
  expect_same_state(*(*y)->copy_prefix(37), *straight, __LINE__);
  // Restored from a shared state (as the scheduler does), the histories borrow its rows:
  // the same states come out, across the borrowed rows and the ones written after, also
  // after a rewind into the borrowed ones.
  auto b = runtime::Session::create(m, {.threads = 1, .keep_history = true});
  ASSERT_TRUE((*b)->restore_prefix(straight, 20).is_ok());
  expect_same_state(*(*b)->copy_prefix(12), *state_of(m, a, 12, true), __LINE__);
  feed(**b, test_tokens(3, V, 9));  // three other tokens, taken back
  ASSERT_TRUE((*b)->rewind(20).is_ok());
  // The restore wrote only what position 20 reads into the rings (16..19): a rewind that
  // needs more is refused, not served from stale slots.
  const Status below = (*b)->rewind(19);
  EXPECT_FALSE(below.is_ok());
  EXPECT_NE(below.message().find("holds positions from 16 on"), std::string::npos) << below.message();
  feed(**b, std::span(a).subspan(20));
  expect_same_state(*(*b)->copy_prefix(37), *straight, __LINE__);
  expect_same_state(*(*b)->copy_prefix(25), *state_of(m, a, 25, true), __LINE__);
  // A new sequence on the same session starts its history again.
  (*y)->clear();
  feed(**y, std::span(a).first(10));
  expect_same_state(*(*y)->copy_prefix(10), *state_of(m, a, 10, true), __LINE__);
  const std::string path = g->dir.file("x.ogkv");
  ASSERT_TRUE((*x)->save(path).is_ok());
  auto z = runtime::Session::create(m, {.threads = 1, .keep_history = true});
  ASSERT_TRUE((*z)->load(path).is_ok());
  auto loaded = (*z)->copy_prefix(37);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->can_restore(36));
  EXPECT_FALSE(loaded->can_restore(20)) << "a ring's slots do not reach back to 20";
  EXPECT_FALSE((*z)->copy_prefix(20).is_ok());
  // A history limit: rows past it are not kept, so longer states hold only the windows.
  auto w = runtime::Session::create(m, {.threads = 1, .keep_history = true, .history_limit = 20});
  feed(**w, std::span(a));
  expect_same_state(*(*w)->copy_prefix(16), *state_of(m, a, 16, true), __LINE__);
  auto past = (*w)->copy_prefix(37);
  ASSERT_TRUE(past.is_ok()) << past.status().message();
  expect_same_state(*past, *state_of(m, a, 37, false), __LINE__);
}

// The key of block k covers blocks 0..k: equal later blocks after different earlier ones
// are not a shared prefix. Stored: E2 = [A Q C D] and E3 = [A B C2]; the request [A B C D
// ...] shares 4 tokens with E2 and 8 with E3, and gets 8.
TEST(PrefixCacheStore, ABlocksKeyCoversEveryBlockBeforeIt) {
  auto flat = testing::generate({.family = "llama", .seed = 58});
  auto m = load(*flat);
  const int64_t V = m->vocab_size();
  const auto a = test_tokens(20, V, 3);
  auto e2 = a;
  for (int i = 4; i < 8; ++i) e2[static_cast<size_t>(i)] = static_cast<int32_t>((a[static_cast<size_t>(i)] + 1) % V);
  e2.resize(16);
  auto e3 = std::vector<int32_t>(a.begin(), a.begin() + 8);
  for (int i = 0; i < 4; ++i) e3.push_back(static_cast<int32_t>((a[static_cast<size_t>(8 + i)] + 2) % V));
  runtime::PrefixCache c({.block_tokens = 4});
  c.insert(e3, state_of(m, e3, 12));
  c.insert(e2, state_of(m, e2, 16));
  auto hit = c.lookup(a);
  ASSERT_TRUE(hit.state);
  EXPECT_EQ(hit.length, 8);
  EXPECT_EQ(c.lookup(with_tail(e2, {1})).length, 16);
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
  StorageType kv;
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
  auto warm = generate::Scheduler::create(m, {.max_sequences = 2, .kv_dtype = c.kv, .threads = 1, .prefix_cache = cache});
  auto cold = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1});
  ASSERT_TRUE(warm.is_ok() && cold.is_ok());
  const int64_t V = m->vocab_size();
  const auto system = test_tokens(37, V, 3);  // a shared "system prompt" of 37 tokens
  const auto first = with_tail(system, test_tokens(5, V, 4)), second = with_tail(system, test_tokens(6, V, 5));
  auto a = serve(**warm, first, 6);
  EXPECT_EQ(a.cached, 0);
  // Branching: the second request shares only the system prompt, restored whole on every
  // cache kind (rings from their kept history: windows of 4-8 wrapped long before 37).
  auto b = serve(**warm, second, 6);
  EXPECT_EQ(b.cached, 37);
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

// A prefix shared up to any length is restored to that length, whatever the rings did
// around it: one stored prompt of 45 tokens (windows of 4-8 in rings of window + 7 slots,
// steps of 8), then requests that leave it after b tokens for b below, at and past a
// window, a ring's size and a step (a match needs one whole block of 4), each restoring
// exactly b tokens and then giving the logits of a cold run.
TEST_P(PrefixReuse, SharedPrefixOfAnyLengthIsRestoredWhole) {
  const auto& c = GetParam();
  auto g = testing::generate({.family = c.family, .seed = 61});
  auto m = load(*g);
  auto cache = std::make_shared<runtime::PrefixCache>(runtime::PrefixCacheOptions{.block_tokens = 4});
  auto warm = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1, .prefix_cache = cache});
  auto cold = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1});
  ASSERT_TRUE(warm.is_ok() && cold.is_ok());
  const int64_t V = m->vocab_size();
  const auto stored = test_tokens(45, V, 21);
  serve(**warm, stored, 1);
  for (int64_t b : {4, 5, 9, 12, 13, 16, 21, 30, 44}) {
    SCOPED_TRACE(b);
    auto request = std::vector<int32_t>(stored.begin(), stored.begin() + b);
    request.push_back(static_cast<int32_t>((stored[static_cast<size_t>(b)] + 1) % V));  // leaves it here
    request = with_tail(request, test_tokens(3, V, 22));
    auto w = serve(**warm, request, 3);
    EXPECT_EQ(w.cached, b);
    auto k = serve(**cold, request, 3);
    EXPECT_EQ(w.tokens, k.tokens);
    EXPECT_EQ(w.logits, k.logits) << "restored prefix changed the logits";
  }
}

// Rings no longer cut a prompt at snapshot points: it runs in whole steps and its one
// stored state (at its end) serves every shorter prefix.
TEST(PrefixReuseStores, RingProgramsStoreOneStatePerPromptInWholeSteps) {
  auto g = testing::generate({.family = "gemma3_text", .seed = 59});
  auto m = load(*g);
  auto cache = std::make_shared<runtime::PrefixCache>(runtime::PrefixCacheOptions{.block_tokens = 4});
  std::vector<int64_t> prompt_rows;
  auto s = generate::Scheduler::create(m, {.max_sequences = 1, .threads = 1, .prefix_cache = cache,
                                           .on_step = [&](const generate::StepRecord& r) { prompt_rows.push_back(r.prompt_rows); }});
  ASSERT_TRUE(s.is_ok());
  serve(**s, test_tokens(22, m->vocab_size(), 11), 1);
  EXPECT_EQ(prompt_rows, (std::vector<int64_t>{8, 8, 6}));
  EXPECT_EQ(cache->counters().stores, 1u);
  const auto shape = cache->lookup(test_tokens(22, m->vocab_size(), 11));
  ASSERT_TRUE(shape.state);
  for (const auto& pc : shape.state->caches) EXPECT_EQ(pc.first, 0) << "every cache holds its rows from position 0";
}

TEST(PrefixReuseStores, PromptAndReplyEndsAreStoredOnceAndAfterTheFirstToken) {
  auto g = testing::generate({.family = "llama", .seed = 57});
  auto m = load(*g);
  auto cache = std::make_shared<runtime::PrefixCache>(runtime::PrefixCacheOptions{.block_tokens = 4});
  auto s = generate::Scheduler::create(m, {.max_sequences = 1, .threads = 1, .prefix_cache = cache});
  ASSERT_TRUE(s.is_ok());
  const int64_t V = m->vocab_size();
  // One token: nothing past the prompt entered the cache, so its end is the only state.
  serve(**s, test_tokens(20, V, 8), 1);
  EXPECT_EQ(cache->counters().stores, 1u);
  // Three tokens: the prompt's end and the reply's end (two tokens fed past the prompt).
  serve(**s, test_tokens(21, V, 9), 3);
  EXPECT_EQ(cache->counters().stores, 3u);
  EXPECT_EQ(cache->counters().entries, 2u) << "the reply's state subsumes its prompt's (flat caches)";
  // The first token is handed out before the prompt's state is copied into the cache.
  std::vector<uint64_t> stores_at_token;
  generate::GenerateOptions o;
  o.max_tokens = 2;
  o.sampling.temperature = 0;
  ASSERT_TRUE((*s)->submit({.prompt = test_tokens(22, V, 10),
                            .options = o,
                            .on_token = [&](int32_t, std::span<const float>) {
                              stores_at_token.push_back(cache->counters().stores);
                              return true;
                            }})
                  .is_ok());
  while ((*s)->step()) {
  }
  ASSERT_EQ(stores_at_token.size(), 2u);
  EXPECT_EQ(stores_at_token[0], 3u) << "the prompt's state was stored before its first token went out";
  EXPECT_EQ(stores_at_token[1], 4u) << "by the second token it is stored";
}

// A cache with the disk tier in `dir`, collecting its warnings.
std::shared_ptr<runtime::PrefixCache> disk_cache(const runtime::Model& m, const std::string& dir, StorageType kv,
                                                 std::vector<std::string>& warnings, uint64_t ram = 512ull << 20,
                                                 uint64_t disk = 1ull << 30, bool fast_math = false) {
  auto c = runtime::PrefixCache::create({.block_tokens = 4,
                                         .budget_bytes = ram,
                                         .dir = dir,
                                         .disk_budget_bytes = disk,
                                         .program_checksum = m.file().checksum(),
                                         .kv_type = kv,
                                         .fast_math = fast_math,
                                         .warn = [&warnings](const std::string& w) { warnings.push_back(w); }});
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.is_ok() ? *c : nullptr;
}

// The snapshot files under a --cache-dir, sorted.
std::vector<std::string> snapshot_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& sub : std::filesystem::directory_iterator(dir))
    for (const auto& f : std::filesystem::directory_iterator(sub.path()))
      if (f.path().extension() == ".ogkv") out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PrefixCacheDisk, RestartedCacheRestoresFromDiskWithTheLogitsOfAColdRun) {
  for (const Case& c : {Case{"llama", StorageType::kF32}, Case{"gemma3_text", StorageType::kBF16}}) {
    SCOPED_TRACE(c.family);
    auto g = testing::generate({.family = c.family, .seed = 56});
    auto m = load(*g);
    const std::string dir = g->dir.file("cache");
    std::vector<std::string> warnings;
    const int64_t V = m->vocab_size();
    const auto system = test_tokens(37, V, 3);
    const auto first = with_tail(system, test_tokens(5, V, 4)), second = with_tail(system, test_tokens(6, V, 5));
    {  // the first server: computes and stores
      auto cache = disk_cache(*m, dir, c.kv, warnings);
      auto warm = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1, .prefix_cache = cache});
      ASSERT_TRUE(warm.is_ok());
      EXPECT_EQ(serve(**warm, first, 6).cached, 0);
      cache->flush();
      EXPECT_GT(cache->counters().disk_entries, 0u);
    }
    auto cache = disk_cache(*m, dir, c.kv, warnings);  // restarted: the index read from disk
    EXPECT_GT(cache->counters().disk_entries, 0u);
    EXPECT_EQ(cache->counters().bytes, 0u) << "nothing is read into RAM before it is asked for";
    auto warm = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1, .prefix_cache = cache});
    auto cold = generate::Scheduler::create(m, {.max_sequences = 1, .kv_dtype = c.kv, .threads = 1});
    ASSERT_TRUE(warm.is_ok() && cold.is_ok());
    auto b = serve(**warm, second, 6);
    EXPECT_EQ(b.cached, 37);
    EXPECT_EQ(cache->counters().disk_loads, 1u);
    auto b_cold = serve(**cold, second, 6);
    EXPECT_EQ(b.tokens, b_cold.tokens);
    EXPECT_EQ(b.logits, b_cold.logits) << "a prefix restored from disk changed the logits";
    EXPECT_TRUE(warnings.empty()) << warnings.front();
  }
}

TEST(PrefixCacheDisk, AnotherProgramNeverReadsTheSnapshots) {
  auto g1 = testing::generate({.family = "llama", .seed = 57}), g2 = testing::generate({.family = "llama", .seed = 58});
  auto m1 = load(*g1), m2 = load(*g2);
  ASSERT_NE(m1->file().checksum(), m2->file().checksum());
  const std::string dir = g1->dir.file("cache");
  std::vector<std::string> warnings;
  const auto a = test_tokens(32, m1->vocab_size(), 1);
  {
    auto c1 = disk_cache(*m1, dir, StorageType::kF32, warnings);
    c1->insert(a, state_of(m1, a, 32));
  }  // destroyed: the write is finished
  auto c2 = disk_cache(*m2, dir, StorageType::kF32, warnings);
  EXPECT_EQ(c2->counters().disk_entries, 0u);
  EXPECT_FALSE(c2->lookup(with_tail(a, {1})).state);
  // Nor does the same program with another kv dtype.
  auto bf16 = disk_cache(*m1, dir, StorageType::kBF16, warnings);
  EXPECT_EQ(bf16->counters().disk_entries, 0u);
  // Nor the same program and dtype in the other math mode (runtime/math_mode.h).
  auto fast = disk_cache(*m1, dir, StorageType::kF32, warnings, 512ull << 20, 1ull << 30, /*fast_math=*/true);
  EXPECT_EQ(fast->counters().disk_entries, 0u);
  EXPECT_TRUE(warnings.empty());
  // Even a file moved into the other program's directory is refused by its header.
  const auto files = snapshot_files(dir);
  ASSERT_EQ(files.size(), 1u);
  c2.reset();
  std::string other_dir;
  for (const auto& sub : std::filesystem::directory_iterator(dir))
    if (sub.path().string() != std::filesystem::path(files[0]).parent_path().string() &&
        sub.path().filename().string().ends_with("-f32"))
      other_dir = sub.path().string();
  ASSERT_FALSE(other_dir.empty());
  std::filesystem::copy_file(files[0], other_dir + "/" + std::filesystem::path(files[0]).filename().string());
  c2 = disk_cache(*m2, dir, StorageType::kF32, warnings);
  EXPECT_EQ(c2->counters().disk_entries, 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("different program"), std::string::npos) << warnings[0];
  auto again = disk_cache(*m1, dir, StorageType::kF32, warnings);  // the owner's file is intact
  EXPECT_TRUE(again->lookup(with_tail(a, {1})).state);
}

TEST(PrefixCacheDisk, TruncatedOrCorruptFilesAreSkippedWithAWarning) {
  auto g = testing::generate({.family = "llama", .seed = 59});
  auto m = load(*g);
  const std::string dir = g->dir.file("cache");
  std::vector<std::string> warnings;
  const int64_t V = m->vocab_size();
  const auto a = test_tokens(32, V, 1), b = test_tokens(32, V, 2);
  {
    auto c = disk_cache(*m, dir, StorageType::kF32, warnings);
    c->insert(a, state_of(m, a, 32));
    c->insert(b, state_of(m, b, 32));
  }
  auto files = snapshot_files(dir);
  ASSERT_EQ(files.size(), 2u);
  const std::string whole = read_file(files[0]);
  write_file(files[0], whole.substr(0, whole.size() - 100));  // truncated in its K/V
  std::string flipped = read_file(files[1]);
  flipped[flipped.size() - 100] ^= 0x10;                      // one bit of its K/V
  write_file(files[1], flipped);
  auto c = disk_cache(*m, dir, StorageType::kF32, warnings);
  ASSERT_EQ(warnings.size(), 1u) << "the truncated file is caught by its size at startup";
  EXPECT_NE(warnings[0].find("truncated"), std::string::npos) << warnings[0];
  EXPECT_EQ(c->counters().disk_entries, 1u);
  EXPECT_FALSE(c->lookup(with_tail(a, {1})).state);
  EXPECT_FALSE(c->lookup(with_tail(b, {1})).state) << "the corrupt file is caught by its checksum when read";
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("checksum mismatch"), std::string::npos) << warnings[1];
  EXPECT_EQ(c->counters().disk_errors, 2u);
  EXPECT_EQ(c->counters().entries, 0u);
  EXPECT_TRUE(snapshot_files(dir).empty()) << "skipped files are deleted";
  // A scheduler on it computes the request cold.
  auto s = generate::Scheduler::create(m, {.max_sequences = 1, .threads = 1, .prefix_cache = c});
  auto cold = generate::Scheduler::create(m, {.max_sequences = 1, .threads = 1});
  auto warm_b = serve(**s, with_tail(b, {3, 4}), 3), cold_b = serve(**cold, with_tail(b, {3, 4}), 3);
  EXPECT_EQ(warm_b.cached, 0);
  EXPECT_EQ(warm_b.logits, cold_b.logits);
}

TEST(PrefixCacheDisk, RamEvictionKeepsStatesOnDiskWithinTheDiskBudget) {
  auto g = testing::generate({.family = "llama", .seed = 60});
  auto m = load(*g);
  const std::string dir = g->dir.file("cache");
  std::vector<std::string> warnings;
  const int64_t V = m->vocab_size();
  const auto a = test_tokens(32, V, 1), b = test_tokens(32, V, 2), c3 = test_tokens(32, V, 3);
  const uint64_t one = state_of(m, a, 32)->bytes();
  uint64_t file_bytes = 0;
  {
    auto probe = disk_cache(*m, g->dir.file("probe"), StorageType::kF32, warnings);
    probe->insert(a, state_of(m, a, 32));
    probe->flush();
    file_bytes = probe->counters().disk_bytes;
  }
  // RAM for one state, disk for two files.
  auto c = disk_cache(*m, dir, StorageType::kF32, warnings, one + one / 2, 2 * file_bytes + file_bytes / 2);
  c->insert(a, state_of(m, a, 32));
  c->flush();
  c->insert(b, state_of(m, b, 32));
  c->flush();
  EXPECT_EQ(c->counters().entries, 2u);
  EXPECT_LE(c->counters().bytes, one + one / 2);
  auto hit = c->lookup(with_tail(a, {1}));  // evicted from RAM, read back from disk
  ASSERT_TRUE(hit.state);
  EXPECT_EQ(hit.length, 32);
  EXPECT_EQ(c->counters().disk_loads, 1u);
  EXPECT_TRUE(std::ranges::equal(hit.state->caches[0].k, state_of(m, a, 32)->caches[0].k));
  c->insert(c3, state_of(m, c3, 32));  // b is the least recently used: its file goes
  c->flush();
  EXPECT_EQ(c->counters().disk_entries, 2u);
  EXPECT_LE(c->counters().disk_bytes, 2 * file_bytes + file_bytes / 2);
  EXPECT_EQ(snapshot_files(dir).size(), 2u);
  EXPECT_FALSE(c->lookup(with_tail(b, {1})).state);
  EXPECT_TRUE(c->lookup(with_tail(a, {1})).state);
  EXPECT_TRUE(c->lookup(with_tail(c3, {1})).state);
  EXPECT_TRUE(warnings.empty());
}

INSTANTIATE_TEST_SUITE_P(Caches, PrefixReuse,
                         ::testing::Values(Case{"llama", StorageType::kF32}, Case{"gemma3_text", StorageType::kF32},
                                           Case{"gemma3_text", StorageType::kBF16}, Case{"gemma4", StorageType::kF32},
                                           Case{"gemma3n", StorageType::kBF16}, Case{"qwen2", StorageType::kF32},
                                           Case{"gemma3_text", StorageType::kQ8_0}, Case{"gemma3n", StorageType::kQ4_0},
                                           Case{"llama", StorageType::kQ4_0}),
                         [](const auto& info) {
                           return info.param.family + "_" + std::string(storage_type_tag(info.param.kv));
                         });

}  // namespace
}  // namespace og
