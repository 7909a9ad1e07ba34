// Special tokens in byte grammars and in the text the reply parsers read. A special token
// (control, not text: <|im_end|>, [TOOL_CALLS], <|channel|>) stands for its text between two
// 0xFF bytes. 0xFF never occurs in UTF-8 and no grammar token carries it otherwise (tokens
// whose bytes hold it are never allowed), so a marked special cannot be spelt by ordinary
// tokens, and JSON (whose grammar has no 0xFF) can never contain one. A template's tool-call
// frame names its special tokens this way (`\xFF[TOOL_CALLS]\xFF[`), and the same frame is
// both the grammar's literal and the parser's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace og::constrain {

inline constexpr char kSpecialMark = '\xFF';

inline std::string mark_special(std::string_view text) {
  std::string s(1, kSpecialMark);
  s += text;
  s += kSpecialMark;
  return s;
}

// The special tokens' texts of one vocabulary, to mark them inside a literal.
class SpecialTexts {
 public:
  SpecialTexts() = default;
  explicit SpecialTexts(std::vector<std::string> texts);
  // `text` with every special token's text marked (longest match first, left to right).
  std::string mark(std::string_view text) const;
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  std::vector<std::string> texts_;  // longest first
};

// Marked text back to plain text: marks dropped, the special's text kept.
std::string unmark(std::string_view marked);

}  // namespace og::constrain
