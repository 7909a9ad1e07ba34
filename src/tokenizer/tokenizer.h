// og::tokenizer::Tokenizer: encode/decode with the exact ids and text of HuggingFace's Rust
// `tokenizers` for BPE tokenizer.json files (byte-level BPE, GPT-2's scheme;
// SentencePiece-style BPE with byte fallback).
//
// Pipeline of encode, as in tokenizers: added/special tokens are cut out of the raw text
// (leftmost-longest; single_word/lstrip/rstrip honoured), the rest is normalized, cut again
// on normalized added tokens, pre-tokenized into words, and each word goes through BPE;
// with add_special the post-processor templates add BOS/EOS ids.
//
// A Tokenizer is immutable and cheap to copy (shared state); encode/decode are thread-safe.
// Components offgraph does not implement are rejected at load with kUnsupported naming the
// tokenizer.json path and type, never approximated.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace og::tokenizer {

struct TokenizerSpec;

class Tokenizer {
 public:
  // tokenizer.json text; `source` names it in error messages.
  static Result<Tokenizer> from_json(std::string_view json_text, const std::string& source = "tokenizer.json");
  // A tokenizer.json file, or a directory that holds one.
  static Result<Tokenizer> from_json_file(const std::string& path);
  // The compact binary form (versioned, checksummed); corrupt blobs are errors.
  static Result<Tokenizer> deserialize(std::span<const uint8_t> blob);
  std::vector<uint8_t> serialize() const;

  // Token ids of UTF-8 `text` (invalid UTF-8 is a kBadInput error naming the byte offset).
  Result<std::vector<int32_t>> encode(std::string_view text, bool add_special = false) const;
  // Text of `ids`, as tokenizers' decode: unknown ids are skipped; with skip_special,
  // special added tokens are too. Invalid byte sequences decode to U+FFFD.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // One more than the largest id of the model or an added token.
  int32_t vocab_size() const;
  // The token string of an id (an added token's content, else the model's), if any.
  std::optional<std::string> id_to_token(int32_t id) const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  bool is_special(int32_t id) const;
  // The bytes token `id` adds to a text after its first token (what a grammar sees: a byte
  // of a UTF-8 character split over tokens stays one raw byte; a leading-space Strip or a
  // Metaspace prepend, which only touch the start of a text, do not apply). None for ids
  // without a token and for special tokens (they are control, not text).
  std::optional<std::string> token_bytes(int32_t id) const;
  // The resolved description this tokenizer was built from (what serialize() writes).
  const TokenizerSpec& spec() const;

 private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  static Result<Tokenizer> build(TokenizerSpec spec);
  std::shared_ptr<const Impl> impl_;
};

// Incremental decoding for generation (tokenizers' DecodeStream): step(id) returns the
// text that id completes, holding back output while the decoded tail is an incomplete
// UTF-8 sequence (it ends in U+FFFD), so multi-byte characters split over byte tokens are
// emitted whole. The concatenated steps equal decode() of all ids once the tail completes.
class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer, bool skip_special = false)
      : tokenizer_(std::move(tokenizer)), skip_special_(skip_special) {}
  // "" while nothing new is complete.
  Result<std::string> step(int32_t id);

 private:
  Tokenizer tokenizer_;
  bool skip_special_;
  std::vector<int32_t> ids_;  // the context window tokenizers keeps: read part + pending ids
  std::string prefix_;        // decode of ids_[0, prefix_index_)
  size_t prefix_index_ = 0;
};

}  // namespace og::tokenizer
