// The stages around the BPE model, compiled from their TokenizerSpec steps: normalizer
// (string -> string), pre-tokenizer (string -> words) and decoder (tokens -> text). Each
// mirrors the tokenizers component of the same name; see the .cc files for the details.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tokenizer/pattern.h"
#include "tokenizer/spec.h"

namespace og::tokenizer {

class Normalizer {
 public:
  Status init(const std::vector<NormalizerStep>& steps);
  bool empty() const { return steps_.empty(); }
  // Applies every step in order to valid UTF-8 `s`.
  Status apply(std::string& s) const;

 private:
  const std::vector<NormalizerStep>* steps_spec_ = nullptr;
  std::vector<Matcher> steps_;  // one per step; used by kReplace
};

// One word produced by pre-tokenization, with whether it begins the original input.
struct Word {
  std::string text;
  bool at_origin = false;
};

class PreTokenizer {
 public:
  Status init(const std::vector<PreTokenizerStep>& steps);
  // Splits one normalized piece into words (replacing the contents of `words`).
  Status apply(std::string_view piece, bool at_origin, std::vector<Word>& words) const;

 private:
  Status apply_step(size_t k, std::vector<Word>& words) const;
  const std::vector<PreTokenizerStep>* steps_spec_ = nullptr;
  std::vector<Matcher> matchers_;  // one per step (unused by kByteLevel without regex)
};

class Decoder {
 public:
  Status init(const std::vector<DecoderStep>& steps, bool has_decoder);
  // Decodes token strings to text, joining what the last step returns.
  std::string decode(std::vector<std::string> tokens) const;
  // The raw bytes one token adds in the middle of a text (Tokenizer::token_bytes).
  std::string token_bytes(const std::string& token) const;

 private:
  const std::vector<DecoderStep>* steps_spec_ = nullptr;
  bool has_decoder_ = false;
  std::vector<Matcher> matchers_;  // one per step; used by kReplace
};

// Matcher for a Split/Replace pattern: literal or compiled regex. `where` names it in errors.
Result<Matcher> compile_pattern(const PatternSpec& p, const std::string& where);

}  // namespace og::tokenizer
