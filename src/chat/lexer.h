// Template source → segments, with Jinja's whitespace rules as transformers configures them.
//
// transformers compiles chat templates with trim_blocks=True and lstrip_blocks=True, so the
// bytes between tags depend on: `{%-`/`-%}` (strip all whitespace on that side), `+`
// (disable trimming), the newline right after `%}`/`#}` (dropped), the indentation before
// `{%`/`{#` on its own line (dropped), `\r\n` → `\n`, and one trailing newline (dropped).
// All of that is decided here, so the parser and interpreter never see layout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace og::chat {

enum class TokenKind { kName, kString, kInt, kFloat, kOp, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // name, operator, or the unescaped string literal
  int64_t int_value = 0;
  double float_value = 0;
  int line = 0;
};

struct Segment {
  enum class Kind { kText, kOutput, kStatement };  // comments produce nothing
  Kind kind = Kind::kText;
  int line = 0;               // where the segment starts, for error messages
  std::string text;           // kText only
  std::vector<Token> tokens;  // kOutput / kStatement: the tag's tokens, then a kEnd token
};

Result<std::vector<Segment>> lex_template(std::string_view source);

}  // namespace og::chat
