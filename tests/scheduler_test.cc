// The scheduler: sequences run together generate exactly what each generates alone through
// generate() (a seeded sequence is unaffected by its neighbours); long prompts are prefilled
// in chunks while others keep decoding, one token per step; cancellation takes effect at
// the next step and frees the slot; requests that can never run are refused at submit.
// The prompt-row budget keeps every mixed step under its target on a simulated machine.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "e2e_support.h"
#include "generate/prompt_row_budget.h"
#include "generate/scheduler.h"

namespace og {
namespace {

using namespace og::testing;

// A simulated machine: a step of n rows costs max(memory, n x row), the row cost growing
// with the prompt's position (attention). Whatever the machine, no mixed step may cost more
// than the target (1 + ratio) decode steps (5 % slack for the row cost drifting between
// two steps), and once the step is compute bound the rows must come near that target.
TEST(PromptRowBudget, EveryMixedStepStaysUnderItsTargetAndRowsReachIt) {
  struct Machine {
    double memory_s, row_s, drift;  // drift: row cost growth per prompt position
    int64_t decodes, max_rows;
  };
  const Machine machines[] = {{0.10, 0.10 / 12, 0, 3, 128},   {0.10, 0.10 / 40, 0, 3, 512},
                              {0.05, 0.05 / 3, 0, 1, 64},     {0.20, 0.20 / 8, 1e-4, 7, 256},
                              {0.10, 0.10 / 100, 2e-4, 2, 64}, {0.10, 0.10 / 12, 0, 30, 128}};
  for (const double ratio : {1.25, 3.0}) {  // near the earlier default (1), and the default
    for (const Machine& m : machines) {
      SCOPED_TRACE(::testing::Message() << "ratio " << ratio << " memory " << m.memory_s << " row " << m.row_s
                                        << " decodes " << m.decodes);
      generate::PromptRowBudget budget(ratio, 4, m.max_rows);
      auto cost = [&](int64_t rows, int64_t position) {
        return std::max(m.memory_s, static_cast<double>(rows) * m.row_s * (1 + m.drift * static_cast<double>(position)));
      };
      int64_t position = 0;
      for (int step = 0; step < 3; ++step) budget.observe(m.decodes, 0, cost(m.decodes, 0));  // streams decoding
      int64_t last_rows = 0;
      for (int step = 0; step < 60; ++step) {
        const double decode_step = cost(m.decodes, 0);
        const int64_t n = budget.rows();
        ASSERT_GE(n, 1);
        ASSERT_LE(n, m.max_rows);
        const double took = cost(m.decodes + n, position);
        EXPECT_LE(took, (1 + ratio) * decode_step * 1.05) << "step " << step << " with " << n << " prompt rows";
        budget.observe(m.decodes, n, took);
        budget.observe(m.decodes, 0, decode_step);  // a decode-only step between two chunks
        position += n;
        last_rows = n;
      }
      // Near the target: the most rows whose compute fits it (or the cap).
      const auto ideal = std::min<int64_t>(
          m.max_rows, static_cast<int64_t>((1 + ratio) * cost(m.decodes, 0) / (m.row_s * (1 + m.drift * position))) - m.decodes);
      EXPECT_GE(last_rows, std::max<int64_t>(1, ideal * 8 / 10));
    }
  }
}

// The target follows the typical decode step, not the last one: two decode steps the host
// slowed by half must not let the mixed steps after them grow past (1 + ratio) typical steps.
TEST(PromptRowBudget, DecodeStepsSlowedByTheHostDoNotRaiseTheTarget) {
  const double ratio = 1.25, decode_s = 0.1, row_s = decode_s / 12;
  const int64_t decodes = 3;
  generate::PromptRowBudget budget(ratio, 4, 512);
  for (double s : {0.1, 0.1, 0.1, 0.1, 0.1, 0.15, 0.16}) budget.observe(decodes, 0, s);
  for (int step = 0; step < 20; ++step) {
    const int64_t n = budget.rows();
    const double took = std::max(decode_s, static_cast<double>(decodes + n) * row_s);
    EXPECT_LE(took, (1 + ratio) * decode_s * 1.05) << "step " << step << " with " << n << " prompt rows";
    budget.observe(decodes, n, took);
  }
}

// Prompts arriving back to back leave no step without prompt rows. When the host then
// slows (by 1.8x here), the decode steps measured before it set too low a target, and every
// decode-sized step looks like a whole budget: without fresh decode steps the prompt rows
// fell to one per step. Starved rows make the budget measure the decode step again, so the
// rows come back near what the slowed steps allow, and no step passes its target. On a host
// that does not change, no step is spent measuring.
TEST(PromptRowBudget, AHostThatSlowsWhilePromptsWaitKeepsTheirRowsNearTheTarget) {
  const double ratio = 1.0, memory_s = 0.18, row_s = 0.0127;  // a step: memory plus its rows' compute
  const int64_t decodes = 2;
  generate::PromptRowBudget budget(ratio, 4, 512);
  double slow = 1.0;
  auto cost = [&](int64_t rows) { return slow * (memory_s + static_cast<double>(rows) * row_s); };
  for (int step = 0; step < 5; ++step) budget.observe(decodes, 0, cost(decodes));  // streams decoding
  slow = 1.8;
  int64_t prompt_rows = 0, steps = 0, decode_only = 0;
  for (int step = 0; step < 120; ++step) {
    const int64_t n = budget.rows();
    ASSERT_GE(n, 0);
    const double took = cost(decodes + n);
    if (n > 0) {
      EXPECT_LE(took, (1 + ratio) * cost(decodes) * 1.05) << "step " << step << " with " << n << " prompt rows";
    }
    budget.observe(decodes, n, took);
    if (step < 60) continue;  // settled: count what prompts get
    prompt_rows += n;
    ++steps;
    decode_only += n == 0;
  }
  // The most rows whose extra cost fits the target, and what prompts get per step on average
  // (decode-only steps included).
  const double ideal = ratio * cost(decodes) / (slow * row_s);
  EXPECT_GE(static_cast<double>(prompt_rows) / static_cast<double>(steps), 0.75 * ideal);
  EXPECT_LE(decode_only, generate::PromptRowBudget::kRefreshSteps);  // measured again once, at most

  // The same host, steady throughout: every step carries prompt rows.
  generate::PromptRowBudget steady(ratio, 4, 512);
  for (int step = 0; step < 5; ++step) steady.observe(decodes, 0, cost(decodes));
  for (int step = 0; step < 120; ++step) {
    const int64_t n = steady.rows();
    ASSERT_GE(n, 1) << "step " << step;
    steady.observe(decodes, n, cost(decodes + n));
  }
}

// The host stalls for a step or two every half second (2-4x a decode step, seen on these
// VMs with nothing else running). A stall must not be taken for what prompt rows cost: the
// rows stay near what the target allows, and the steps the host did not stall stay under it.
TEST(PromptRowBudget, StallsOfTheHostDoNotStarveThePromptRows) {
  const double ratio = 1.0, memory_s = 0.05, row_s = memory_s / 12;
  const int64_t decodes = 3;
  auto cost = [&](int64_t rows) { return std::max(memory_s, static_cast<double>(rows) * row_s); };
  for (const int stall_steps : {1, 2}) {  // a stall lasts one step, or two in a row
    SCOPED_TRACE(::testing::Message() << "stalls of " << stall_steps << " steps");
    generate::PromptRowBudget budget(ratio, 4, 512);
    for (int step = 0; step < 5; ++step) budget.observe(decodes, 0, cost(decodes));  // streams decoding
    int64_t prompt_rows = 0, steps = 0;
    for (int step = 0; step < 180; ++step) {
      const int64_t n = budget.rows();
      const bool stalled = step % 9 < stall_steps;
      const double took = cost(decodes + n) * (stalled ? 3.0 : 1.0);
      if (n > 0 && !stalled) {
        EXPECT_LE(took, (1 + ratio) * cost(decodes) * 1.05) << "step " << step << " with " << n << " prompt rows";
      }
      budget.observe(decodes, n, took);
      if (step < 45) continue;  // settled
      prompt_rows += n;
      ++steps;
    }
    const double ideal = (1 + ratio) * cost(decodes) / row_s - static_cast<double>(decodes);
    EXPECT_GE(static_cast<double>(prompt_rows) / static_cast<double>(steps), 0.75 * ideal);
  }
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gen_ = testing::generate({.family = "gemma3_text", .seed = 41});
    auto m = runtime::Model::load(export_to(*gen_, "p.ogp", "fp32", 8, 96));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    model_ = *m;
  }
  generate::GenerateOptions options(uint64_t seed, float temperature, int32_t max_tokens) {
    generate::GenerateOptions o;
    o.max_tokens = max_tokens;
    o.sampling.temperature = temperature;
    o.sampling.seed = seed;
    o.sampling.repetition_penalty = 1.1f;
    o.stop_ids = {3};
    return o;
  }
  std::vector<int32_t> alone(const std::vector<int32_t>& prompt, const generate::GenerateOptions& o) {
    auto s = runtime::Session::create(model_, {.threads = 1});
    EXPECT_TRUE(s.is_ok());
    std::vector<int32_t> out;
    auto r = generate::generate(**s, prompt, o, [&](int32_t t) {
      out.push_back(t);
      return true;
    });
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return out;
  }
  std::unique_ptr<Generated> gen_;
  std::shared_ptr<const runtime::Model> model_;
};

TEST_F(SchedulerTest, SequencesGenerateWhatTheyGenerateAlone) {
  struct Req {
    std::vector<int32_t> prompt;
    generate::GenerateOptions o;
    std::vector<int32_t> got;
    std::optional<generate::SequenceStats> stats;
  };
  std::vector<Req> reqs;
  const int64_t V = model_->vocab_size();
  // Prompts longer than the 8-row step, sampled and greedy, more requests than slots.
  // Every third request under a JSON grammar (a toy vocabulary: token i is byte i % 256,
  // repeated i / 256 + 1 times): constrained and free rows in the same steps.
  std::vector<std::optional<std::string>> bytes;
  for (int64_t i = 0; i < V; ++i) bytes.emplace_back(std::string(static_cast<size_t>(i / 256 + 1), static_cast<char>(i % 256)));
  auto schema = constrain::compile_json_schema(nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "string"}}}})"));
  ASSERT_TRUE(schema.is_ok());
  const auto grammar = std::make_shared<const constrain::GrammarMasks>(*schema, std::make_shared<const constrain::TokenTrie>(bytes));
  for (int i = 0; i < 6; ++i) {
    reqs.push_back({test_tokens(3 + 7 * i, V, static_cast<uint32_t>(100 + i)),
                    options(static_cast<uint64_t>(i), i % 2 ? 0.0f : 0.9f, 6 + 3 * i), {}, std::nullopt});
    if (i % 3 == 0) reqs.back().o.sampling.grammar = grammar;
  }
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 3, .threads = 2});
  ASSERT_TRUE(sched.is_ok()) << sched.status().message();
  for (Req& r : reqs) {
    auto id = (*sched)->submit({.prompt = r.prompt,
                                .options = r.o,
                                .on_token = [&r](int32_t t, std::span<const float>) {
                                  r.got.push_back(t);
                                  return true;
                                },
                                .on_done = [&r](const Result<generate::SequenceStats>& s) {
                                  ASSERT_TRUE(s.is_ok()) << s.status().message();
                                  r.stats = *s;
                                }});
    ASSERT_TRUE(id.is_ok()) << id.status().message();
  }
  int steps = 0;
  while ((*sched)->step()) ASSERT_LT(++steps, 1000);
  EXPECT_EQ((*sched)->running(), 0u);
  EXPECT_EQ((*sched)->queued(), 0u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].got, alone(reqs[i].prompt, reqs[i].o)) << "request " << i;
    if (reqs[i].o.sampling.grammar) {  // the text so far is a prefix the grammar reads
      EXPECT_FALSE(reqs[i].got.empty()) << "request " << i;
      EXPECT_EQ(reqs[i].got.empty() ? -1 : reqs[i].got[0], '{') << "request " << i;
      constrain::Matcher m(grammar->grammar());
      for (int32_t t : reqs[i].got) EXPECT_TRUE(m.advance(*bytes[static_cast<size_t>(t)])) << "request " << i;
    }
    ASSERT_TRUE(reqs[i].stats.has_value()) << "request " << i << " never finished";
    EXPECT_EQ(reqs[i].stats->generated_tokens, static_cast<int64_t>(reqs[i].got.size()));
    EXPECT_EQ(reqs[i].stats->prompt_tokens, static_cast<int64_t>(reqs[i].prompt.size()));
  }
}

TEST_F(SchedulerTest, DecodesKeepGoingWhileALongPromptIsPrefilled) {
  std::vector<generate::StepRecord> records;
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 4,
                                                    .threads = 1,
                                                    .prefill_rows_while_decoding = 2,
                                                    .on_step = [&](const generate::StepRecord& r) { records.push_back(r); }});
  ASSERT_TRUE(sched.is_ok());
  std::vector<int> tokens(4, 0);
  auto submit = [&](int i, int64_t prompt_len, int32_t max_tokens) {
    auto o = options(1, 0.0f, max_tokens);
    o.stop_ids.clear();  // every step must yield a token
    auto id = (*sched)->submit({.prompt = test_tokens(prompt_len, model_->vocab_size(), static_cast<uint32_t>(i)),
                                .options = o,
                                .on_token = [&tokens, i](int32_t, std::span<const float>) {
                                  ++tokens[static_cast<size_t>(i)];
                                  return true;
                                }});
    ASSERT_TRUE(id.is_ok());
  };
  for (int i = 0; i < 3; ++i) submit(i, 2, 60);
  for (int k = 0; k < 3; ++k) ASSERT_TRUE((*sched)->step());  // the three are decoding now
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].decode_rows, 0) << "the first step prefills the three prompts";
  EXPECT_EQ(records[0].prompt_rows, 6);
  submit(3, 40, 1);                                             // 40 prompt tokens, 2 rows a step
  for (int k = 0; k < 20; ++k) {
    const std::vector<int> before = tokens;
    ASSERT_TRUE((*sched)->step());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(tokens[static_cast<size_t>(i)], before[static_cast<size_t>(i)] + 1) << "step " << k;
    EXPECT_EQ(tokens[3], k < 19 ? 0 : 1) << "the long prompt should take 20 steps of 2 rows";
    // The step log says what the step carried: three decodes and two prompt rows, timed.
    ASSERT_EQ(records.size(), static_cast<size_t>(4 + k));
    const generate::StepRecord& r = records.back();
    EXPECT_EQ(r.decode_rows, 3) << "step " << k;
    EXPECT_EQ(r.prompt_rows, 2) << "step " << k;
    EXPECT_EQ(r.prompt_row_budget, 2) << "step " << k;
    EXPECT_GT(r.run_seconds, 0) << "step " << k;
    EXPECT_GE(r.admit_seconds, 0) << "step " << k;
    EXPECT_GE(r.after_seconds, 0) << "step " << k;
  }
}

TEST_F(SchedulerTest, CancelStopsAtTheNextStepAndFreesTheSlot) {
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 1, .threads = 1});
  ASSERT_TRUE(sched.is_ok());
  int produced = 0;
  std::optional<generate::StopReason> first_stop, second_stop;
  auto a = (*sched)->submit({.prompt = {5, 6, 7},
                             .options = options(1, 0.0f, 50),
                             .on_token = [&](int32_t, std::span<const float>) { return ++produced, true; },
                             .on_done = [&](const Result<generate::SequenceStats>& s) { first_stop = s->stop; }});
  auto b = (*sched)->submit({.prompt = {8, 9},
                             .options = options(1, 0.0f, 50),
                             .on_done = [&](const Result<generate::SequenceStats>& s) { second_stop = s->stop; }});
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_TRUE((*sched)->step());
  ASSERT_TRUE((*sched)->step());
  EXPECT_EQ((*sched)->queued(), 1u);  // one slot: b waits
  (*sched)->cancel(*b);               // cancelled while queued
  (*sched)->cancel(*a);
  const int at_cancel = produced;
  (*sched)->step();
  EXPECT_EQ(produced, at_cancel);
  EXPECT_EQ(first_stop, generate::StopReason::kCancelled);
  EXPECT_EQ(second_stop, generate::StopReason::kCancelled);
  EXPECT_EQ((*sched)->running(), 0u);
  EXPECT_EQ((*sched)->queued(), 0u);
  EXPECT_FALSE((*sched)->step());
  // The freed slot runs the next request from a clean session.
  std::vector<int32_t> got;
  auto c = (*sched)->submit({.prompt = {5, 6, 7}, .options = options(1, 0.0f, 5), .on_token = [&](int32_t t, std::span<const float>) {
                               got.push_back(t);
                               return true;
                             }});
  ASSERT_TRUE(c.is_ok());
  while ((*sched)->step()) {
  }
  EXPECT_EQ(got, alone({5, 6, 7}, options(1, 0.0f, 5)));
}

TEST_F(SchedulerTest, RequestsThatCanNeverRunAreRefusedAtSubmit) {
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 1, .threads = 1});
  ASSERT_TRUE(sched.is_ok());
  auto empty = (*sched)->submit({.prompt = {}, .options = options(1, 0, 5)});
  EXPECT_NE(empty.status().message().find("no tokens"), std::string::npos);
  auto too_long = (*sched)->submit({.prompt = test_tokens(97, model_->vocab_size()), .options = options(1, 0, 5)});
  EXPECT_NE(too_long.status().message().find("exceeds the context of 96"), std::string::npos) << too_long.status().message();
  auto bad_id = (*sched)->submit({.prompt = {1, -2}, .options = options(1, 0, 5)});
  EXPECT_NE(bad_id.status().message().find("outside the vocabulary"), std::string::npos);
  auto bad_sampling = options(1, 0.5f, 5);
  bad_sampling.sampling.top_p = 0;
  EXPECT_FALSE((*sched)->submit({.prompt = {1}, .options = bad_sampling}).is_ok());
  EXPECT_EQ((*sched)->queued(), 0u);
  EXPECT_FALSE((*sched)->step());
}

// Each refusal carries its code (the server maps codes to statuses, nothing else decides),
// and the context rule is one: the prompt must leave room for a token (a 96-token prompt in
// a 96-position context is refused, 95 is not), and prompt + max_tokens must fit.
TEST_F(SchedulerTest, RefusalsCarryTheirCodeAndThePromptMustLeaveRoomForAToken) {
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 1, .threads = 1});
  ASSERT_TRUE(sched.is_ok());
  const int64_t V = model_->vocab_size();
  using generate::Refusal;
  EXPECT_EQ((*sched)->submit({.prompt = {}, .options = options(1, 0, 5)}).refusal(), Refusal::kInvalid);
  EXPECT_EQ((*sched)->submit({.prompt = {1, static_cast<int32_t>(V)}, .options = options(1, 0, 5)}).refusal(), Refusal::kBadToken);
  EXPECT_EQ((*sched)->submit({.prompt = test_tokens(97, V), .options = options(1, 0, 5)}).refusal(), Refusal::kContextExceeded);
  auto full = (*sched)->submit({.prompt = test_tokens(96, V), .options = options(1, 0, -1)});
  EXPECT_EQ(full.refusal(), Refusal::kContextExceeded);
  EXPECT_NE(full.status().message().find("leaving no room"), std::string::npos) << full.status().message();
  EXPECT_EQ((*sched)->submit({.prompt = test_tokens(90, V), .options = options(1, 0, 7)}).refusal(), Refusal::kContextExceeded);
  auto fits = (*sched)->submit({.prompt = test_tokens(90, V), .options = options(1, 0, 6)});
  EXPECT_TRUE(fits.is_ok()) << fits.status().message();
  auto room_for_one = (*sched)->submit({.prompt = test_tokens(95, V), .options = options(1, 0, -1)});
  EXPECT_TRUE(room_for_one.is_ok()) << room_for_one.status().message();
  int steps = 0;
  while ((*sched)->step()) ASSERT_LT(++steps, 1000);
}

// The stop path with a stop id the model really produces (taken from a greedy run): the
// sequence ends before that token, which is neither passed on nor counted; max_tokens 0 asks
// for nothing and gets nothing; and no decode step runs once max_tokens is reached.
TEST_F(SchedulerTest, StopIdsEndBeforeTheTokenAndMaxTokensEndsWithoutAWastedStep) {
  // A Llama-shaped model (the fixture's tiny Gemma repeats one token whatever it samples).
  gen_ = testing::generate({.family = "llama", .seed = 61});
  auto llama = runtime::Model::load(export_to(*gen_, "q.ogp", "fp32", 8, 96));
  ASSERT_TRUE(llama.is_ok()) << llama.status().message();
  model_ = *llama;
  const std::vector<int32_t> prompt = test_tokens(6, model_->vocab_size(), 5);
  auto o = options(3, 0.9f, 12);  // seeded sampling: the same tokens alone and scheduled
  o.stop_ids = {};
  const std::vector<int32_t> greedy = alone(prompt, o);
  ASSERT_EQ(greedy.size(), 12u);
  // The first token that does not occur before it.
  size_t k = 1;
  while (k < greedy.size() && std::find(greedy.begin(), greedy.begin() + static_cast<std::ptrdiff_t>(k), greedy[k]) !=
                                  greedy.begin() + static_cast<std::ptrdiff_t>(k))
    ++k;
  ASSERT_LT(k, greedy.size()) << "a run of twelve tokens repeating its first one throughout: " << ::testing::PrintToString(greedy);
  int64_t steps = 0;
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 1, .threads = 1,
                                                    .on_step = [&](const generate::StepRecord&) { ++steps; }});
  ASSERT_TRUE(sched.is_ok());
  struct Out {
    std::vector<int32_t> tokens;
    std::optional<generate::SequenceStats> stats;
  };
  auto run = [&](generate::GenerateOptions opts) {
    Out out;
    auto id = (*sched)->submit({.prompt = prompt,
                                .options = opts,
                                .on_token = [&](int32_t t, std::span<const float>) {
                                  out.tokens.push_back(t);
                                  return true;
                                },
                                .on_done = [&](const Result<generate::SequenceStats>& st) {
                                  ASSERT_TRUE(st.is_ok());
                                  out.stats = *st;
                                }});
    EXPECT_TRUE(id.is_ok()) << id.status().message();
    steps = 0;
    while ((*sched)->step()) {
    }
    return out;
  };
  auto stop = o;
  stop.stop_ids = {greedy[k]};
  const Out stopped = run(stop);
  EXPECT_EQ(stopped.tokens, std::vector<int32_t>(greedy.begin(), greedy.begin() + static_cast<std::ptrdiff_t>(k)));
  ASSERT_TRUE(stopped.stats);
  EXPECT_EQ(stopped.stats->stop, generate::StopReason::kStopToken);
  EXPECT_EQ(stopped.stats->generated_tokens, static_cast<int64_t>(k));

  auto none = o;
  none.max_tokens = 0;
  const Out nothing = run(none);
  EXPECT_TRUE(nothing.tokens.empty());
  ASSERT_TRUE(nothing.stats);
  EXPECT_EQ(nothing.stats->generated_tokens, 0);
  EXPECT_EQ(nothing.stats->stop, generate::StopReason::kMaxTokens);

  auto three = o;
  three.max_tokens = 3;
  const Out three_out = run(three);
  EXPECT_EQ(three_out.tokens, std::vector<int32_t>(greedy.begin(), greedy.begin() + 3));
  // One step prefills the prompt and samples the first token, two more feed tokens 1 and 2.
  EXPECT_EQ(steps, 3) << "a step ran after max_tokens was reached";
}

// max_waiting bounds what may wait beyond the slots (kQueueFull past it), and a sequence's
// slot counts as free before its on_done runs: a requester that submits again from on_done
// (as a client's next request right after its answer) is admitted.
TEST_F(SchedulerTest, QueueBoundRefusesPastItAndAFinishedSlotCountsAsFreeInOnDone) {
  auto sched = generate::Scheduler::create(model_, {.max_sequences = 1, .threads = 1, .max_waiting = 1});
  ASSERT_TRUE(sched.is_ok());
  generate::Scheduler& s = **sched;
  std::optional<generate::Submission> from_done;
  auto first = s.submit({.prompt = {5, 6, 7}, .options = options(1, 0.0f, 3), .on_done = [&](const Result<generate::SequenceStats>&) {
    if (!from_done) from_done = s.submit({.prompt = {8, 9}, .options = options(1, 0.0f, 2)});
  }});
  ASSERT_TRUE(first.is_ok());
  auto second = s.submit({.prompt = {1, 2}, .options = options(1, 0.0f, 2)});
  ASSERT_TRUE(second.is_ok()) << second.status().message();  // waits: 1 running + 1 waiting
  auto third = s.submit({.prompt = {3}, .options = options(1, 0.0f, 2)});
  EXPECT_EQ(third.refusal(), generate::Refusal::kQueueFull);
  ASSERT_TRUE(s.step());  // admits the first (the second keeps waiting)
  // Drain the first: the submit in its on_done sees 0 running + 1 waiting < 2.
  int steps = 0;
  while (!from_done && s.step()) ASSERT_LT(++steps, 100);
  ASSERT_TRUE(from_done.has_value());
  EXPECT_TRUE(from_done->is_ok()) << from_done->status().message();
  while (s.step()) ASSERT_LT(++steps, 1000);
  EXPECT_EQ(s.running(), 0u);
  EXPECT_EQ(s.queued(), 0u);
}

}  // namespace
}  // namespace og
