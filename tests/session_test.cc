// Sessions on one loaded program: independence, rewind, and step validation that leaves
// a session unchanged when it refuses a step.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "e2e_support.h"
#include "export/graph_builder.h"
#include "program/validator.h"
#include "reference/toolkit.h"
#include "runtime/batch_runner.h"
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

// A latent-attention program's caches keep v as their k (one copy): the layout says so for
// every cache, the caches take half the bytes of two copies, and a session on them matches the
// float64 reference, and in fp32 and q8_0 storage alike equals itself through a restored prefix
// (a state copied out and written back), a save file, and token by token beside another session.
TEST(ValueIsKey, LatentCachesKeepOneCopyAndRestoreSaveAndBatchExactly) {
  auto g = generate({.family = "deepseek_v3", .seed = 9});
  auto m = runtime::Model::load(export_to(*g, "p.ogp", "fp32", 8, 64));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const program::CacheLayout& l = (*m)->layout();
  ASSERT_EQ(l.value_is_key.size(), static_cast<size_t>(l.n_caches()));
  for (int32_t c = 0; c < l.n_caches(); ++c) EXPECT_TRUE(l.values_are_keys(c)) << c;
  const runtime::CacheSetPlan plan = runtime::plan_cache_set(l, StorageType::kF32, 64, 8);
  for (int32_t c = 0; c < plan.n_caches(); ++c)
    EXPECT_EQ(plan.slot_bytes(c), uint64_t{4} * static_cast<uint64_t>(l.kv_heads[c] * l.head_dims[c])) << c;
  EXPECT_EQ(plan.position_bytes(), plan.bytes() / 64);  // prefix states hold the one copy too
  auto set = runtime::CacheSet::create(plan);
  ASSERT_TRUE(set.is_ok());
  for (int32_t c = 0; c < set->plan().n_caches(); ++c) EXPECT_EQ(set->storage(c).v, set->storage(c).k) << c;  // V is K's memory
  const auto ids = test_tokens(20, (*m)->vocab_size(), 4), other = test_tokens(20, (*m)->vocab_size(), 5);
  for (StorageType kv : {StorageType::kF32, StorageType::kQ8_0}) {
    SCOPED_TRACE(kv == StorageType::kF32 ? "fp32" : "q8_0");
    auto make = [&] {
      auto s = runtime::Session::create(*m, {.kv_dtype = kv});
      EXPECT_TRUE(s.is_ok());
      return std::move(*s);
    };
    // Steps of at most the program's 8-token chunk.
    auto feed = [](runtime::Session& s, std::span<const int32_t> t) {
      std::vector<float> out;
      for (size_t i = 0; i < t.size(); i += 8) {
        auto l = s.append(t.subspan(i, std::min<size_t>(8, t.size() - i)));
        EXPECT_TRUE(l.is_ok()) << l.status().message();
        if (l.is_ok()) out.insert(out.end(), l->begin(), l->end());
      }
      return out;
    };
    auto cold = make();
    const std::vector<float> want = feed(*cold, ids);
    const int64_t V = (*m)->vocab_size();
    if (kv == StorageType::kF32) {
      Diff d = compare(want, reference_logits(*g, ids), g->config.vocab_size);
      EXPECT_LE(d.relative(), 1e-4);
    }
    // A prefix of 12 copied out of a session and restored into a fresh one, then the rest.
    auto a = make();
    feed(*a, std::span<const int32_t>(ids.data(), 12));
    auto state = a->copy_prefix(12);
    ASSERT_TRUE(state.is_ok()) << state.status().message();
    const runtime::CacheSetPlan kv_plan = runtime::plan_cache_set(l, kv, 64, 8);
    EXPECT_EQ(state->bytes(), 12 * kv_plan.position_bytes());  // one copy of each row
    for (const auto& pc : state->caches) EXPECT_EQ(pc.v.data(), pc.k.data());
    auto b = make();
    ASSERT_TRUE(b->restore_prefix(*state).is_ok());
    EXPECT_EQ(feed(*b, std::span<const int32_t>(ids.data() + 12, 8)), std::vector<float>(want.begin() + 12 * V, want.end()));
    // The same through a save file.
    TempDir dir;
    ASSERT_TRUE(a->save(dir.file("s.cache")).is_ok());
    auto c = make();
    ASSERT_TRUE(c->load(dir.file("s.cache")).is_ok());
    EXPECT_EQ(feed(*c, std::span<const int32_t>(ids.data() + 12, 8)), std::vector<float>(want.begin() + 12 * V, want.end()));
    // A prefix state's file holds one copy too, and reads back into a state that continues alike.
    const uint64_t checksum = (*m)->file().checksum();
    ASSERT_TRUE(runtime::save_prefix_state(dir.file("p.cache"), checksum, *state, ids).is_ok());
    auto stored = runtime::load_prefix_state(dir.file("p.cache"), checksum, kv);
    ASSERT_TRUE(stored.is_ok()) << stored.status().message();
    EXPECT_EQ(stored->state.bytes(), state->bytes());
    EXPECT_LT(stored->file_bytes, state->bytes() + 1024);
    uint32_t version = 0;  // version 3: these caches keep one copy (cache_file.h)
    std::memcpy(&version, read_file(dir.file("p.cache")).data() + 8, 4);
    EXPECT_EQ(version, 3u);
    auto e = make();
    ASSERT_TRUE(e->restore_prefix(stored->state).is_ok());
    EXPECT_EQ(feed(*e, std::span<const int32_t>(ids.data() + 12, 8)), std::vector<float>(want.begin() + 12 * V, want.end()));
    // Token by token beside another session's tokens, interleaved.
    auto d1 = make(), d2 = make();
    std::vector<float> got;
    for (size_t t = 0; t < ids.size(); ++t) {
      auto x = d1->append(std::span<const int32_t>(ids.data() + t, 1));
      ASSERT_TRUE(x.is_ok());
      got.insert(got.end(), x->begin(), x->end());
      ASSERT_TRUE(d2->append(std::span<const int32_t>(other.data() + t, 1)).is_ok());
    }
    EXPECT_EQ(got, want) << "decode == prefill";
  }
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

// ------------------------------------------------------------------- attention sinks, end to end

// A hand-built two-layer program whose update_and_attend ops carry sinks (gpt_oss's, here
// without its experts): x = embed(ids); per layer x += o(attend(q(x),
// k(x), v(x))) with layer 0 a window of 3 (a ring of 3 + 4 - 1 slots) and layer 1 the full
// history; logits = head(x). Every weight is f32 and random.
struct SinkProgram {
  static constexpr int64_t V = 11, H = 12, Hq = 4, Hkv = 2, D = 6, L = 2, kWindow = 3, kChunk = 4;
  std::vector<std::vector<float>> w;  // by name order below, row-major [out, in]
  std::vector<float> embed, head;
  std::vector<std::vector<float>> q, k, v, o, sinks;  // per layer
};

std::vector<float> uniform(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = d(rng);
  return out;
}

std::string write_sink_program(const SinkProgram& m, const std::string& path) {
  using SP = SinkProgram;
  fb::ProgramT p;
  p.model_id = "sinks";
  p.family = "hand-built";
  p.dtype = fb::DType::F32;
  p.vocab_size = SP::V;
  p.max_ctx_len = 64;
  p.prefill_chunk_size = SP::kChunk;
  program::CacheLayout layout{.n_layers = SP::L, .layer_to_cache = {0, 1}, .kv_heads = {SP::Hkv, SP::Hkv},
                              .head_dims = {SP::D, SP::D}, .windows = {SP::kWindow, 0}};
  p.layout = program::layout_to_fb(layout);
  auto writer = program::ProgramWriter::create(path);
  EXPECT_TRUE(writer.is_ok());
  exporter::GraphBuilder g(**writer, p, fb::DType::F32, false, 0);
  auto w = [&](const std::string& name, const std::vector<float>& data, std::vector<int64_t> shape) {
    auto id = g.weight_f32(name, data, std::move(shape));
    EXPECT_TRUE(id.is_ok());
    return *id;
  };
  exporter::ValueId x = g.embedding(w("embed", m.embed, {SP::V, SP::H}), SP::H, 1.0f);
  for (int64_t l = 0; l < SP::L; ++l) {
    const std::string n = std::to_string(l);
    const exporter::ValueId q = g.linear(x, w("q" + n, m.q[l], {SP::Hq * SP::D, SP::H}));
    const exporter::ValueId k = g.linear(x, w("k" + n, m.k[l], {SP::Hkv * SP::D, SP::H}));
    const exporter::ValueId v = g.linear(x, w("v" + n, m.v[l], {SP::Hkv * SP::D, SP::H}));
    const exporter::AttendSpec spec{.cache_id = static_cast<int32_t>(l), .scale = 0.5f, .n_heads = SP::Hq,
                                    .n_kv_heads = SP::Hkv, .head_dim = SP::D,
                                    .sinks = w("sinks" + n, m.sinks[l], {SP::Hq})};
    const exporter::ValueId a = g.attend(q, k, v, spec);
    x = g.add(x, g.linear(a, w("o" + n, m.o[l], {SP::H, SP::Hq * SP::D})));
  }
  g.set_logits(g.lm_head(x, w("head", m.head, {SP::V, SP::H})));
  EXPECT_TRUE(g.write_weights().is_ok());
  const Status s = (*writer)->finish(p);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return path;
}

// y [T, out] = x [T, in] · Wᵀ in float64.
reference::Mat matmul_t(const reference::Mat& x, const std::vector<float>& wt, int64_t out) {
  reference::Mat y(x.rows, out);
  for (int64_t t = 0; t < x.rows; ++t)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < x.cols; ++i) y.at(t, o) += x.at(t, i) * wt[static_cast<size_t>(o * x.cols + i)];
  return y;
}

// The same model in float64 through the reference's attention (sinks as transformers'
// eager_attention_forward applies them), over the whole sequence at once.
std::vector<double> sink_reference(const SinkProgram& m, const std::vector<int32_t>& ids) {
  using SP = SinkProgram;
  const int64_t T = static_cast<int64_t>(ids.size());
  reference::Mat x(T, SP::H);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < SP::H; ++i) x.at(t, i) = m.embed[static_cast<size_t>(ids[t] * SP::H + i)];
  for (int64_t l = 0; l < SP::L; ++l) {
    reference::AttentionParams ap{.n_heads = SP::Hq, .n_kv_heads = SP::Hkv, .head_dim = SP::D, .scale = 0.5,
                                  .softcap = 0, .window = l == 0 ? SP::kWindow : 0,
                                  .sinks = std::vector<double>(m.sinks[l].begin(), m.sinks[l].end())};
    const reference::Mat a = reference::attention(matmul_t(x, m.q[l], SP::Hq * SP::D), matmul_t(x, m.k[l], SP::Hkv * SP::D),
                                                  matmul_t(x, m.v[l], SP::Hkv * SP::D), ap);
    reference::add_inplace(x, matmul_t(a, m.o[l], SP::H));
  }
  return matmul_t(x, m.head, SP::V).v;
}

TEST(AttentionSinks, TinyProgramMatchesTheReferenceAndDecodeEqualsPrefill) {
  using SP = SinkProgram;
  SinkProgram m;
  m.embed = uniform(SP::V * SP::H, 1, -1, 1);
  m.head = uniform(SP::V * SP::H, 2, -1, 1);
  for (int64_t l = 0; l < SP::L; ++l) {
    const uint32_t s = 10 * static_cast<uint32_t>(l + 1);
    m.q.push_back(uniform(SP::Hq * SP::D * SP::H, s + 1, -0.8f, 0.8f));
    m.k.push_back(uniform(SP::Hkv * SP::D * SP::H, s + 2, -0.8f, 0.8f));
    m.v.push_back(uniform(SP::Hkv * SP::D * SP::H, s + 3, -1, 1));
    m.o.push_back(uniform(SP::H * SP::Hq * SP::D, s + 4, -0.5f, 0.5f));
    // From negligible (-4) to dominant (+5) against scores of a few units.
    m.sinks.push_back(uniform(SP::Hq, s + 5, -4, 5));
  }
  TempDir dir;
  auto model = runtime::Model::load(write_sink_program(m, dir.file("sinks.ogp")));
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2};  // 17 > 2 * (window + chunk)
  const int64_t T = static_cast<int64_t>(ids.size());

  // Prefill in chunks of 4 (the ring wraps), against float64 with sinks.
  auto prefill = runtime::Session::create(*model);
  ASSERT_TRUE(prefill.is_ok());
  std::vector<float> got;
  for (int64_t t = 0; t < T; t += SP::kChunk) {
    auto l = (*prefill)->append(std::span<const int32_t>(ids.data() + t, std::min<int64_t>(SP::kChunk, T - t)));
    ASSERT_TRUE(l.is_ok()) << l.status().message();
    got.insert(got.end(), l->begin(), l->end());
  }
  const std::vector<double> want = sink_reference(m, ids);
  double max_logit = 0, max_err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_logit = std::max(max_logit, std::fabs(want[i]));
    max_err = std::max(max_err, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(max_err, 2e-6 * max_logit) << "max |logit| " << max_logit;
  // The sinks matter here: the same model without them is far from these logits.
  SinkProgram no_sinks = m;
  for (auto& s : no_sinks.sinks) std::fill(s.begin(), s.end(), -1e4f);
  const std::vector<double> without = sink_reference(no_sinks, ids);
  double diff = 0;
  for (size_t i = 0; i < want.size(); ++i) diff = std::max(diff, std::fabs(without[i] - want[i]));
  EXPECT_GT(diff, 0.05 * max_logit);

  // Token-by-token decode equals the chunked prefill bit for bit, for every kv dtype; and a
  // batched step (this session's token beside another session's chunk) equals both.
  for (StorageType kv : {StorageType::kF32, StorageType::kBF16, StorageType::kF16, StorageType::kQ8_0, StorageType::kQ4_0}) {
    auto a = runtime::Session::create(*model, {.kv_dtype = kv});
    auto b = runtime::Session::create(*model, {.kv_dtype = kv});
    auto other = runtime::Session::create(*model, {.kv_dtype = kv});
    auto runner = runtime::BatchRunner::create(*model);
    ASSERT_TRUE(a.is_ok() && b.is_ok() && other.is_ok() && runner.is_ok());
    std::vector<float> chunked, decoded, batched;
    for (int64_t t = 0; t < T; t += SP::kChunk) {
      auto l = (*a)->append(std::span<const int32_t>(ids.data() + t, std::min<int64_t>(SP::kChunk, T - t)));
      ASSERT_TRUE(l.is_ok());
      chunked.insert(chunked.end(), l->begin(), l->end());
    }
    for (int64_t t = 0; t < T; ++t) {
      auto l = (*b)->append(std::span<const int32_t>(ids.data() + t, 1));
      ASSERT_TRUE(l.is_ok());
      decoded.insert(decoded.end(), l->begin(), l->end());
    }
    EXPECT_EQ(chunked, decoded) << "kv dtype " << static_cast<int>(kv);
    auto c = runtime::Session::create(*model, {.kv_dtype = kv});
    ASSERT_TRUE(c.is_ok());
    const std::vector<int32_t> other_ids = {7, 7, 2};
    for (int64_t t = 0; t < T; ++t) {
      const runtime::BatchEntry entries[] = {
          {.session = c->get(), .ids = std::span<const int32_t>(ids.data() + t, 1), .logits = runtime::LogitsRows::kAll},
          {.session = other->get(), .ids = other_ids, .logits = runtime::LogitsRows::kAll}};
      auto r = (*runner)->step(entries);
      ASSERT_TRUE(r.is_ok()) << r.status().message();
      batched.insert(batched.end(), (*r)[0].begin(), (*r)[0].end());
    }
    EXPECT_EQ(batched, decoded) << "kv dtype " << static_cast<int>(kv);
  }
}

}  // namespace
}  // namespace og
