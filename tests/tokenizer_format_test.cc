// The tokenizer's error paths and binary form on a tiny hand-made byte-level BPE: corrupt
// blobs are errors and never crashes (the ASan lane runs this too), unsupported components
// are kUnsupported errors naming their tokenizer.json path and type, the Oniguruma->PCRE2
// class translation, UTF-8 replacement, and streaming of a character split over byte tokens.
#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "tokenizer/pattern.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {
namespace {

using Json = nlohmann::json;

// 256 byte-level characters plus "he", "ll", "llo", "hello", "Ġhello" and an added "<s>".
Json tiny_json() {
  Json vocab = Json::object();
  for (int b = 0; b < 256; ++b) vocab[std::string(byte_char_utf8(static_cast<uint8_t>(b)))] = b;
  const std::string G(byte_char_utf8(' '));
  vocab["he"] = 256, vocab["ll"] = 257, vocab["llo"] = 258, vocab["hello"] = 259, vocab[G + "hello"] = 260;
  return Json{{"version", "1.0"},
              {"added_tokens", Json::array({{{"id", 261}, {"content", "<s>"}, {"single_word", false}, {"lstrip", false},
                                             {"rstrip", false}, {"normalized", false}, {"special", true}}})},
              {"normalizer", nullptr},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
              {"post_processor",
               {{"type", "TemplateProcessing"},
                {"single", Json::array({Json{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, Json{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {261}}, {"tokens", {"<s>"}}}}}}}},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model",
               {{"type", "BPE"}, {"vocab", vocab}, {"merges", Json::array({"h e", "l l", Json::array({"ll", "o"}), "he llo", G + " hello"})}}}};
}

Tokenizer tiny() { return *Tokenizer::from_json(tiny_json().dump(), "tiny.json"); }

std::vector<uint8_t> with_checksum(std::vector<uint8_t> blob) {
  constexpr size_t kHeader = 32;  // magic 8, version 4, reserved 4, payload size 8, checksum 8
  const uint64_t sum = XXH3_64bits(blob.data() + kHeader, blob.size() - kHeader);
  std::memcpy(blob.data() + 24, &sum, 8);
  return blob;
}

TEST(TokenizerTiny, EncodesMergesAddedTokensAndTemplate) {
  const Tokenizer t = tiny();
  EXPECT_EQ(*t.encode("hello hello"), (std::vector<int32_t>{259, 260}));
  EXPECT_EQ(*t.encode("hello<s>", true), (std::vector<int32_t>{261, 259, 261}));
  EXPECT_EQ(t.decode(std::vector<int32_t>{261, 259, 260}), "<s>hello hello");
  EXPECT_EQ(t.decode(std::vector<int32_t>{261, 259, 99999, -1}, true), "hello");
  EXPECT_TRUE(t.is_special(261));
  EXPECT_EQ(t.vocab_size(), 262);
  EXPECT_EQ(t.token_to_id("llo"), 258);
}

TEST(TokenizerTiny, InvalidUtf8TextIsAnErrorNamingTheByte) {
  auto r = tiny().encode("ok\xC3(");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kBadInput);
  EXPECT_NE(r.status().message().find("byte 2"), std::string::npos) << r.status().message();
}

TEST(TokenizerStream, EuroSignOverThreeByteTokensIsEmittedWhole) {
  const Tokenizer t = tiny();
  const std::vector<int32_t> ids = *t.encode("a\xE2\x82\xAC");  // "a€": 'a' and three byte tokens
  ASSERT_EQ(ids.size(), 4u);
  StreamDecoder s(t);
  std::vector<std::string> chunks;
  for (int32_t id : ids) chunks.push_back(*s.step(id));
  EXPECT_EQ(chunks, (std::vector<std::string>{"a", "", "", "\xE2\x82\xAC"}));
}

TEST(TokenizerBlob, RoundTripIsByteIdentical) {
  const std::vector<uint8_t> blob = tiny().serialize();
  auto back = Tokenizer::deserialize(blob);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->serialize(), blob);
  EXPECT_EQ(*back->encode("hello<s> hello", true), *tiny().encode("hello<s> hello", true));
}

TEST(TokenizerBlob, EveryTruncationIsAnError) {
  const std::vector<uint8_t> blob = tiny().serialize();
  for (size_t n = 0; n < blob.size(); ++n)
    EXPECT_FALSE(Tokenizer::deserialize(std::span(blob.data(), n)).is_ok()) << "prefix of " << n << " bytes loaded";
}

TEST(TokenizerBlob, HeaderErrorsNameTheProblem) {
  std::vector<uint8_t> blob = tiny().serialize();
  std::vector<uint8_t> magic = blob;
  magic[0] = 'X';
  EXPECT_NE(Tokenizer::deserialize(magic).status().message().find("bad magic"), std::string::npos);
  std::vector<uint8_t> future = blob;
  future[8] = 99;
  EXPECT_EQ(Tokenizer::deserialize(future).status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(Tokenizer::deserialize(future).status().message().find("format version 99"), std::string::npos);
  std::vector<uint8_t> flipped = blob;
  flipped[blob.size() / 2] ^= 0x40;
  EXPECT_NE(Tokenizer::deserialize(flipped).status().message().find("checksum"), std::string::npos);
}

// Payload corruption that passes the checksum: the reader and the model checks must turn it
// into an error, or into a tokenizer that still encodes and decodes without touching memory
// it does not own.
TEST(TokenizerBlob, CorruptPayloadWithValidChecksumNeverCrashes) {
  const std::vector<uint8_t> blob = tiny().serialize();
  std::mt19937 rng(7);
  size_t rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bad = blob;
    const int edits = 1 + trial % 4;
    for (int e = 0; e < edits; ++e) bad[32 + rng() % (bad.size() - 32)] = static_cast<uint8_t>(rng());
    auto t = Tokenizer::deserialize(with_checksum(std::move(bad)));
    if (!t.is_ok()) {
      ++rejected;
      EXPECT_TRUE(t.status().code() == ErrorCode::kBadInput || t.status().code() == ErrorCode::kUnsupported) << t.status().message();
      continue;
    }
    auto ids = t->encode("hello <s> h\xC3\xA9llo 123", true);
    if (ids.is_ok()) (void)t->decode(*ids);
    (void)t->decode(std::vector<int32_t>{0, 5, 259, 261, 1 << 20});
  }
  EXPECT_GT(rejected, 1000u);
}

Status load_with(const std::string& key, const Json& value, const std::string& model_key = "") {
  Json j = tiny_json();
  if (model_key.empty()) j[key] = value;
  else j["model"][model_key] = value;
  return Tokenizer::from_json(j.dump(), "t.json").status();
}

TEST(TokenizerJson, UnsupportedComponentsNameTheirPathAndType) {
  const struct {
    std::string key, model_key;
    Json value;
    std::string expect;
  } cases[] = {
      {"normalizer", "", {{"type", "Precompiled"}, {"precompiled_charsmap", "x"}}, "t.json: normalizer: type 'Precompiled' is not supported"},
      {"normalizer", "", {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Nmt"}}}}}, "normalizer.normalizers[1]: type 'Nmt'"},
      {"pre_tokenizer", "", {{"type", "BertPreTokenizer"}}, "pre_tokenizer: type 'BertPreTokenizer' is not supported"},
      {"decoder", "", {{"type", "WordPiece"}, {"prefix", "##"}}, "decoder: type 'WordPiece' is not supported"},
      {"post_processor", "", {{"type", "RobertaProcessing"}}, "post_processor: type 'RobertaProcessing' is not supported"},
      {"model", "", {{"type", "Unigram"}, {"vocab", Json::array()}}, "model: type 'Unigram' is not supported"},
      {"truncation", "", {{"max_length", 8}}, "truncation is set"},
      {"", "dropout", 0.1, "dropout = 0.1"},
  };
  for (const auto& c : cases) {
    const Status s = c.model_key.empty() ? load_with(c.key, c.value) : load_with("", c.value, c.model_key);
    EXPECT_EQ(s.code(), ErrorCode::kUnsupported) << c.expect << " / " << s.message();
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
  }
}

TEST(TokenizerJson, MalformedFilesAreBadInputNamingTheField) {
  EXPECT_EQ(Tokenizer::from_json("{", "t.json").status().code(), ErrorCode::kBadInput);
  const Status merge = load_with("", Json::array({"h e", "q zz"}), "merges");
  EXPECT_EQ(merge.code(), ErrorCode::kBadInput);
  EXPECT_NE(merge.message().find("model.merges[1]: token 'zz' is not in the vocabulary"), std::string::npos) << merge.message();
  const Status id = load_with("", Json{{"a", -3}}, "vocab");
  EXPECT_NE(id.message().find("model.vocab: token 'a' has id -3"), std::string::npos) << id.message();
  const Status re = load_with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}, {"invert", false}});
  EXPECT_NE(re.message().find("regex '(unclosed' does not compile"), std::string::npos) << re.message();
  const Status dir = Tokenizer::from_json_file("/nonexistent/dir").status();
  EXPECT_NE(dir.message().find("/nonexistent/dir: no such file"), std::string::npos) << dir.message();
}

TEST(TokenizerRegex, OnigurumaClassesBecomeExplicitPcre2Classes) {
  EXPECT_EQ(*onig_to_pcre2(R"(\s+(?!\S))"), R"([\t-\r\x{85}\p{Z}]+(?![^\t-\r\x{85}\p{Z}]))");
  EXPECT_EQ(*onig_to_pcre2(R"([^\s\p{L}\p{N}]+)"), R"([^\t-\r\x{85}\p{Z}\p{L}\p{N}]+)");
  EXPECT_EQ(*onig_to_pcre2(R"(\w\\s[\]s])"), R"([\p{L}\p{M}\p{Nd}\p{Pc}]\\s[\]s])");
  EXPECT_EQ(onig_to_pcre2(R"([\S])").status().code(), ErrorCode::kUnsupported);
}

TEST(TokenizerUtf8, LossyReplacementFollowsMaximalSubparts) {
  EXPECT_EQ(utf8_lossy("a\xF0\x9F\x98"), "a\xEF\xBF\xBD");                   // truncated 4-byte: one U+FFFD
  EXPECT_EQ(utf8_lossy("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");             // E0 80 is never valid: two
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate: three
  EXPECT_EQ(find_invalid_utf8("ok\xC0\xAF"), 2u);                           // overlong
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);                     // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xF0\x9F\x98\x80 \xE2\x82\xAC"), kValidUtf8);
}

}  // namespace
}  // namespace og::tokenizer
