// Batched steps: rows of several sessions in one step give each session exactly the logits
// it gets stepping alone (bit for bit), for every family, weight storage and kv dtype, with
// rings that wrap inside the batch and in any entry order; a bad entry refuses the whole
// step and changes no session.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "e2e_support.h"
#include "runtime/batch_runner.h"

namespace og {
namespace {

using namespace og::testing;
using runtime::BatchEntry;
using runtime::LogitsRows;

constexpr int64_t kChunk = 8;    // the program's prefill_chunk_size: the batch's row budget
constexpr int64_t kMaxCtx = 64;

// One sequence's plan: its tokens, cut into the steps it takes (sizes), and what it asks.
struct Plan {
  std::vector<int32_t> ids;
  std::vector<int64_t> steps;     // token counts, summing to ids.size()
  LogitsRows rows = LogitsRows::kAll;
  StorageType kv = StorageType::kF32;
};

// Logits of each step of a plan, the session stepping alone.
std::vector<std::vector<float>> solo(const std::shared_ptr<const runtime::Model>& m, const Plan& p) {
  auto s = runtime::Session::create(m, {.kv_dtype = p.kv, .threads = 1});
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  std::vector<std::vector<float>> out;
  size_t t = 0;
  for (int64_t n : p.steps) {
    auto l = (*s)->append(std::span<const int32_t>(p.ids.data() + t, static_cast<size_t>(n)), p.rows);
    EXPECT_TRUE(l.is_ok()) << l.status().message();
    if (!l.is_ok()) return out;
    out.emplace_back(l->begin(), l->end());
    t += static_cast<size_t>(n);
  }
  return out;
}

// The same plans run together: at tick k, every plan that still has steps takes its k-th
// step in one batched step, the entries in a shuffled order.
std::vector<std::vector<std::vector<float>>> batched(const std::shared_ptr<const runtime::Model>& m,
                                                     const std::vector<Plan>& plans, uint32_t seed, int threads) {
  auto runner = runtime::BatchRunner::create(m, {.threads = threads});
  EXPECT_TRUE(runner.is_ok()) << runner.status().message();
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  for (const Plan& p : plans) {
    auto s = runtime::Session::create(m, {.kv_dtype = p.kv, .threads = 1});
    EXPECT_TRUE(s.is_ok());
    sessions.push_back(std::move(*s));
  }
  std::vector<std::vector<std::vector<float>>> out(plans.size());
  std::vector<size_t> done(plans.size(), 0);
  std::mt19937 rng(seed);
  for (size_t tick = 0;; ++tick) {
    std::vector<size_t> order;
    for (size_t i = 0; i < plans.size(); ++i)
      if (tick < plans[i].steps.size()) order.push_back(i);
    if (order.empty()) break;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<BatchEntry> entries;
    for (size_t i : order)
      entries.push_back({.session = sessions[i].get(),
                         .ids = std::span<const int32_t>(plans[i].ids.data() + done[i], static_cast<size_t>(plans[i].steps[tick])),
                         .logits = plans[i].rows});
    auto l = (*runner)->step(entries);
    EXPECT_TRUE(l.is_ok()) << l.status().message();
    if (!l.is_ok()) return out;
    for (size_t k = 0; k < order.size(); ++k) {
      out[order[k]].emplace_back((*l)[k].begin(), (*l)[k].end());
      done[order[k]] += static_cast<size_t>(plans[order[k]].steps[tick]);
    }
  }
  return out;
}

// Four sequences: one prefilling in chunks of 5 then decoding, three decoding a token per
// step from different starts; at most 8 rows a tick. 24 tokens each wrap every ring here.
std::vector<Plan> mixed_plans(int64_t vocab) {
  std::vector<Plan> plans(4);
  plans[0].steps = {5, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  plans[1].steps = std::vector<int64_t>(24, 1);
  plans[2].steps = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  plans[3].steps = {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // 8 rows at most a tick
  plans[1].rows = LogitsRows::kLast;
  plans[3].rows = LogitsRows::kLast;
  for (size_t i = 0; i < plans.size(); ++i) {
    int64_t n = 0;
    for (int64_t s : plans[i].steps) n += s;
    plans[i].ids = test_tokens(n, vocab, static_cast<uint32_t>(11 + i));
  }
  return plans;
}

void expect_batched_equals_solo(const std::shared_ptr<const runtime::Model>& m, const std::vector<Plan>& plans,
                                uint32_t seed, int threads = 1) {
  const auto got = batched(m, plans, seed, threads);
  for (size_t i = 0; i < plans.size(); ++i) {
    const auto want = solo(m, plans[i]);
    ASSERT_EQ(got[i].size(), want.size()) << "sequence " << i;
    for (size_t k = 0; k < want.size(); ++k)
      ASSERT_EQ(got[i][k], want[k]) << "sequence " << i << ", step " << k << " differs from the solo run";
  }
}

class BatchEveryFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchEveryFamily, EachSessionGetsItsSoloLogitsBitForBit) {
  auto g = generate({.family = GetParam(), .seed = 21});
  auto m = runtime::Model::load(export_to(*g, "p.ogp", "fp32", kChunk, kMaxCtx));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  expect_batched_equals_solo(*m, mixed_plans((*m)->vocab_size()), 1);
  expect_batched_equals_solo(*m, mixed_plans((*m)->vocab_size()), 2);  // another entry order
}

INSTANTIATE_TEST_SUITE_P(Families, BatchEveryFamily, ::testing::ValuesIn(testgen::generator_families()),
                         [](const auto& info) { return info.param; });

// Weight storages and kv dtypes: bf16 weights, 4w/8w with int8 activations (mixture-of-experts
// rows of several sessions included), and sessions of different kv dtypes (float and
// block-quantized) in one batch.
class BatchStorage : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(BatchStorage, EachSessionGetsItsSoloLogitsBitForBit) {
  const auto& [family, storage] = GetParam();
  auto g = generate({.family = family, .seed = 22});
  exporter::ExportOptions o;
  o.dtype = storage == "bf16" ? "bf16" : "fp32";
  if (storage == "4w" || storage == "8w") o.qlinear = storage;
  o.prefill_chunk_size = kChunk;
  o.max_ctx_len = kMaxCtx;
  auto m = runtime::Model::load(export_with(*g, "p.ogp", o));
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  auto plans = mixed_plans((*m)->vocab_size());
  plans[1].kv = StorageType::kBF16;
  plans[2].kv = StorageType::kF16;
  plans[3].kv = storage == "4w" ? StorageType::kQ4_0 : StorageType::kQ8_0;
  expect_batched_equals_solo(*m, plans, 3, /*threads=*/2);
}

INSTANTIATE_TEST_SUITE_P(Storages, BatchStorage,
                         ::testing::Combine(::testing::Values("llama", "gemma3_text", "gemma4", "qwen3_moe"),
                                            ::testing::Values("bf16", "4w", "8w")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

class BatchValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    gen_ = generate({.family = "gemma3_text", .seed = 23});
    auto m = runtime::Model::load(export_to(*gen_, "p.ogp", "fp32", kChunk, kMaxCtx));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    model_ = *m;
    auto r = runtime::BatchRunner::create(model_, {.threads = 1});
    ASSERT_TRUE(r.is_ok());
    runner_ = std::move(*r);
    for (int i = 0; i < 2; ++i) {
      auto s = runtime::Session::create(model_, {.threads = 1});
      ASSERT_TRUE(s.is_ok());
      sessions_.push_back(std::move(*s));
      ASSERT_TRUE(sessions_.back()->append(std::vector<int32_t>{1, 2, 3}).is_ok());
    }
  }
  // After a refused step, both sessions continue exactly as a session that saw only 1 2 3.
  void expect_untouched() {
    auto fresh = runtime::Session::create(model_, {.threads = 1});
    ASSERT_TRUE(fresh.is_ok());
    ASSERT_TRUE((*fresh)->append(std::vector<int32_t>{1, 2, 3}).is_ok());
    auto want = (*fresh)->append(std::vector<int32_t>{4});
    ASSERT_TRUE(want.is_ok());
    const std::vector<float> w(want->begin(), want->end());
    for (auto& s : sessions_) {
      EXPECT_EQ(s->length(), 3);
      auto got = s->append(std::vector<int32_t>{4});
      ASSERT_TRUE(got.is_ok());
      EXPECT_EQ(std::vector<float>(got->begin(), got->end()), w);
      ASSERT_TRUE(s->rewind(3).is_ok());
    }
  }
  std::string refuse(std::vector<BatchEntry> entries) {
    auto r = runner_->step(entries);
    EXPECT_FALSE(r.is_ok());
    return r.is_ok() ? "" : r.status().message();
  }
  std::unique_ptr<Generated> gen_;
  std::shared_ptr<const runtime::Model> model_;
  std::unique_ptr<runtime::BatchRunner> runner_;
  std::vector<std::unique_ptr<runtime::Session>> sessions_;
};

TEST_F(BatchValidation, ABadEntryRefusesTheWholeStepNamingIt) {
  const std::vector<int32_t> ok{7}, bad_id{static_cast<int32_t>(model_->vocab_size())}, gap_pos{9};
  const std::vector<int32_t> five{1, 2, 3, 4, 5};
  std::string msg = refuse({{.session = sessions_[0].get(), .ids = ok}, {.session = sessions_[1].get(), .ids = bad_id}});
  EXPECT_NE(msg.find("batch entry 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside the vocabulary"), std::string::npos) << msg;
  msg = refuse({{.session = sessions_[0].get(), .ids = ok, .positions = gap_pos}, {.session = sessions_[1].get(), .ids = ok}});
  EXPECT_NE(msg.find("batch entry 0"), std::string::npos) << msg;
  msg = refuse({{.session = sessions_[0].get(), .ids = ok}, {.session = sessions_[0].get(), .ids = ok}});
  EXPECT_NE(msg.find("also entry 0"), std::string::npos) << msg;
  msg = refuse({{.session = sessions_[0].get(), .ids = five}, {.session = sessions_[1].get(), .ids = five}});
  EXPECT_NE(msg.find("exceed prefill_chunk_size 8"), std::string::npos) << msg;
  msg = refuse({{.session = sessions_[0].get(), .ids = ok}, {.session = nullptr, .ids = ok}});
  EXPECT_NE(msg.find("batch entry 1: no session"), std::string::npos) << msg;
  msg = refuse({});
  EXPECT_NE(msg.find("no entries"), std::string::npos) << msg;
  expect_untouched();
}

TEST_F(BatchValidation, SessionsOfAnotherProgramAreRefused) {
  auto other = runtime::Model::load(export_to(*gen_, "q.ogp", "fp32", kChunk, kMaxCtx));
  ASSERT_TRUE(other.is_ok());
  auto s = runtime::Session::create(*other, {.threads = 1});
  ASSERT_TRUE(s.is_ok());
  const std::vector<int32_t> ok{7};
  const std::string msg = refuse({{.session = sessions_[0].get(), .ids = ok}, {.session = s->get(), .ids = ok}});
  EXPECT_NE(msg.find("batch entry 1: the session runs another program"), std::string::npos) << msg;
  expect_untouched();
}

}  // namespace
}  // namespace og
