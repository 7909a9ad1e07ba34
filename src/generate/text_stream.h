// Generated tokens → the text a user sees, piece by piece, the one way the CLI, the chat
// loop, Python and the server all turn tokens into text:
// - special tokens are skipped; a piece ending inside a UTF-8 character is held back until
//   the character completes (tokenizer::StreamDecoder);
// - stop strings (OpenAI `stop`) end the text and are never emitted, even across tokens
//   (StopStringMatcher);
// - at the end, finish() returns what is still held: an incomplete last character decodes
//   to U+FFFD, as decoding all the ids at once does, then the text a stop string's prefix
//   held back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "generate/stop_strings.h"
#include "tokenizer/tokenizer.h"

namespace og::generate {

class TextStream {
 public:
  // `mark_specials`: special tokens are not skipped but written as their marked text
  // (constrain/special_marks.h), for a reply parser that reads a template's control tokens.
  explicit TextStream(const tokenizer::Tokenizer& tokenizer, std::vector<std::string> stop_strings = {},
                      bool mark_specials = false);

  // The text `token` completes (maybe empty). An error of the decoder (an id outside the
  // vocabulary) is returned, and the stream stops.
  Result<std::string> push(int32_t token);
  // What is left to emit once generation ends (empty after a stop string).
  std::string finish();
  // A stop string has completed: nothing more will be emitted.
  bool stopped() const { return stops_.stopped(); }
  const std::vector<int32_t>& tokens() const { return tokens_; }

 private:
  tokenizer::Tokenizer tokenizer_;        // a shared handle
  tokenizer::StreamDecoder decoder_;
  StopStringMatcher stops_;
  std::vector<int32_t> tokens_;   // every token pushed
  size_t decoded_bytes_ = 0;      // bytes the decoder has returned so far (specials not counted)
  bool mark_specials_ = false;
};

}  // namespace og::generate
