// Patterns that split or rewrite text, with the match semantics of tokenizers' `Pattern`:
// a literal string, a regex (tokenizers compiles Oniguruma syntax; we translate it to PCRE2
// with UTF+UCP and make `\s`, `\w`, `\h` mean what they mean in Oniguruma), or a
// character predicate. find_matches covers the whole input with ordered, contiguous
// (offsets, is_match) spans, exactly as tokenizers' find_matches does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace og::tokenizer {

struct Span {
  size_t begin, end;
  bool is_match;
};

// A compiled PCRE2 regex (JIT when available). Thread-safe: match state is per thread.
class Regex {
 public:
  // `pattern` is in Oniguruma syntax; errors name `where` and the PCRE2 message.
  static Result<std::shared_ptr<const Regex>> compile(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Non-overlapping matches left to right; an empty match right after the previous match
  // is skipped (onig's and Rust regex's iteration rule). `text` must be valid UTF-8.
  Status find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const;

 private:
  Regex() = default;
  void* code_ = nullptr;  // pcre2_code_8*
  std::string pattern_;
};

// Rewrites Oniguruma-only meanings into PCRE2 syntax (exposed for tests).
Result<std::string> onig_to_pcre2(const std::string& pattern);

enum class CharClass : uint8_t { kWhiteSpace, kNumeric };

class Matcher {
 public:
  static Matcher literal(std::string s);
  static Matcher regex(std::shared_ptr<const Regex> re);
  static Matcher char_class(CharClass c);
  static Matcher single_char(char32_t c);

  // Whole-input cover of matched / unmatched spans; [(0,0,false)] for empty input.
  Status find_matches(std::string_view text, std::vector<Span>& out) const;

 private:
  enum class Kind : uint8_t { kLiteral, kRegex, kClass, kChar };
  Kind kind_ = Kind::kLiteral;
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
  CharClass class_ = CharClass::kWhiteSpace;
  char32_t char_ = 0;
};

enum class SplitBehavior : uint8_t { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Applies a SplitDelimiterBehavior to find_matches output (flags inverted first when
// `invert`); returns the non-empty [begin, end) pieces.
std::vector<std::pair<size_t, size_t>> split_spans(std::vector<Span> spans, SplitBehavior behavior, bool invert);

}  // namespace og::tokenizer
