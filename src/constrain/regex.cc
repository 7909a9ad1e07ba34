#include "constrain/regex.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/utf8.h"

namespace og::constrain {
namespace {

using Ranges = std::vector<std::pair<char32_t, char32_t>>;  // code points, inclusive
constexpr char32_t kMaxCode = 0x10FFFF;

Ranges normalized(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (auto [lo, hi] : r) {
    if (!out.empty() && lo <= out.back().second + 1) out.back().second = std::max(out.back().second, hi);
    else out.emplace_back(lo, hi);
  }
  return out;
}

Ranges complement(const Ranges& r) {
  Ranges out;
  char32_t next = 0;
  for (auto [lo, hi] : normalized(r)) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCode) out.emplace_back(next, kMaxCode);
  return out;
}

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
// ECMAScript's \s: WhiteSpace and LineTerminator.
const Ranges kSpace = normalized({{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                                  {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}});
const Ranges kLineTerminators = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

void utf8_bytes(char32_t c, uint8_t* out, int n) {
  std::string s;
  append_utf8(s, c);
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(s[static_cast<size_t>(i)]);
}

// UTF-8 byte sequences of the code points in [lo, hi] (no surrogates), split as RE2 does:
// into ranges of one encoded length whose bytes vary independently.
void utf8_ranges(char32_t lo, char32_t hi, std::vector<ExprPtr>& out) {
  if (lo > hi) return;
  if (lo <= 0xDFFF && hi >= 0xD800) {  // surrogates are not characters
    utf8_ranges(lo, 0xD7FF, out);
    utf8_ranges(0xE000, hi, out);
    return;
  }
  for (char32_t max : {0x7Fu, 0x7FFu, 0xFFFFu})
    if (lo <= max && hi > max) {
      utf8_ranges(lo, max, out);
      utf8_ranges(max + 1, hi, out);
      return;
    }
  if (hi <= 0x7F) {
    out.push_back(byte_ranges({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}}));
    return;
  }
  const int n = hi <= 0x7FF ? 2 : hi <= 0xFFFF ? 3 : 4;
  for (int i = 1; i < n; ++i) {
    const char32_t m = (char32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) == (hi & ~m)) continue;
    if ((lo & m) != 0) {
      utf8_ranges(lo, lo | m, out);
      utf8_ranges((lo | m) + 1, hi, out);
      return;
    }
    if ((hi & m) != m) {
      utf8_ranges(lo, (hi & ~m) - 1, out);
      utf8_ranges(hi & ~m, hi, out);
      return;
    }
  }
  uint8_t a[4], b[4];
  utf8_bytes(lo, a, n);
  utf8_bytes(hi, b, n);
  std::vector<ExprPtr> bytes;
  for (int i = 0; i < n; ++i) bytes.push_back(byte_ranges({{a[i], b[i]}}));
  out.push_back(seq(std::move(bytes)));
}

// The characters of `r` as a JSON string writes them: '"', '\' and control characters as
// their escapes (named ones by name, others \u00xx: nlohmann's and Python's choice), the rest
// raw; with a `raw_without` character, all of them raw but that one (a string in a template's
// notation, which cannot hold its quote's first character).
ExprPtr json_chars(const Ranges& r, std::optional<char32_t> raw_without = std::nullopt) {
  std::vector<ExprPtr> alts;
  if (raw_without) {
    const Ranges allowed = complement({{*raw_without, *raw_without}});
    for (auto [lo, hi] : normalized(r))
      for (auto [a, b] : allowed) utf8_ranges(std::max(lo, a), std::min(hi, b), alts);
    return alt(std::move(alts));
  }
  Ranges raw;
  for (auto [lo, hi] : normalized(r)) {
    for (char32_t c = lo; c <= std::min<char32_t>(hi, 0x5C); ++c) {
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      static const char* kNamed[] = {"\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006",
                                     "\\u0007", "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r"};
      if (c == '"') alts.push_back(lit("\\\""));
      else if (c == '\\') alts.push_back(lit("\\\\"));
      else if (c < 14) alts.push_back(lit(kNamed[c]));
      else alts.push_back(lit(fmt::format("\\u{:04x}", static_cast<unsigned>(c))));
    }
    raw.emplace_back(lo, hi);
  }
  // The raw part: r without the characters escaped above.
  Ranges kept;
  for (auto [lo, hi] : raw)
    for (auto [a, b] : complement({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}})) {
      const char32_t x = std::max(lo, a), y = std::min(hi, b);
      if (x <= y) kept.emplace_back(x, y);
    }
  for (auto [lo, hi] : normalized(kept)) utf8_ranges(lo, hi, alts);
  return alt(std::move(alts));
}

// The characters of `r` as Python's repr writes them in single quotes: ' and \ escaped, \n
// \r \t by name and other controls as \xHH, the rest as themselves.
ExprPtr python_chars(const Ranges& r) {
  std::vector<ExprPtr> alts;
  for (auto [lo, hi] : normalized(r)) {
    for (char32_t c = lo; c <= std::min<char32_t>(hi, 0x7F); ++c) {
      if (c >= 0x20 && c != '\'' && c != '\\' && c != 0x7F) continue;
      if (c == '\'' || c == '\\') alts.push_back(lit(std::string{'\\', static_cast<char>(c)}));
      else if (c == '\n') alts.push_back(lit("\\n"));
      else if (c == '\r') alts.push_back(lit("\\r"));
      else if (c == '\t') alts.push_back(lit("\\t"));
      else alts.push_back(lit(fmt::format("\\x{:02x}", static_cast<unsigned>(c))));
    }
  }
  Ranges kept;  // r without the characters escaped above
  for (auto [lo, hi] : normalized(r))
    for (auto [a, b] : complement({{0, 0x1F}, {'\'', '\''}, {'\\', '\\'}, {0x7F, 0x7F}})) {
      const char32_t x = std::max(lo, a), y = std::min(hi, b);
      if (x <= y) kept.emplace_back(x, y);
    }
  for (auto [lo, hi] : normalized(kept)) utf8_ranges(lo, hi, alts);
  return alt(std::move(alts));
}

class Parser {
 public:
  Parser(std::u32string p, std::optional<char32_t> raw_without, bool python = false)
      : p_(std::move(p)), raw_without_(raw_without), python_(python) {}

  // Top-level branches each take their own anchors: "^a|b$" is (^a)|(b$).
  Result<ExprPtr> whole() {
    const ExprPtr any = star(chars({{0, kMaxCode}}));
    std::vector<ExprPtr> branches;
    for (;;) {
      const bool anchored_start = at('^');
      if (anchored_start) ++i_;
      OG_ASSIGN_OR_RETURN(ExprPtr body, sequence(0));
      const bool anchored_end = at('$');
      if (anchored_end) ++i_;
      branches.push_back(seq({anchored_start ? seq({}) : any, body, anchored_end ? seq({}) : any}));
      if (!at('|')) break;
      ++i_;
    }
    if (i_ < p_.size()) return error(p_[i_] == ')' ? "an unmatched ')'" : "an anchor or construct here");
    return alt(std::move(branches));
  }

 private:
  Status error(const std::string& what) const {
    return unsupported("pattern: {} at character {} is not supported", what, i_);
  }
  bool at(char32_t c) const { return i_ < p_.size() && p_[i_] == c; }

  Result<ExprPtr> alternation(int depth) {
    if (depth > 64) return error("nesting deeper than 64");
    std::vector<ExprPtr> alts;
    for (;;) {
      OG_ASSIGN_OR_RETURN(ExprPtr s, sequence(depth));
      alts.push_back(s);
      if (!at('|')) break;
      ++i_;
    }
    return alt(std::move(alts));
  }

  Result<ExprPtr> sequence(int depth) {
    std::vector<ExprPtr> items;
    while (i_ < p_.size() && !at('|') && !at(')')) {
      if (depth == 0 && at('$') && (i_ + 1 == p_.size() || p_[i_ + 1] == '|')) break;  // whole() takes it
      OG_ASSIGN_OR_RETURN(ExprPtr a, atom(depth));
      OG_ASSIGN_OR_RETURN(a, quantified(a));
      items.push_back(a);
    }
    return seq(std::move(items));
  }

  Result<ExprPtr> quantified(ExprPtr a) {
    int32_t min = -1, max = -1;
    if (at('*')) min = 0, max = -1, ++i_;
    else if (at('+')) min = 1, max = -1, ++i_;
    else if (at('?')) min = 0, max = 1, ++i_;
    else if (at('{')) {
      const size_t start = i_;
      ++i_;
      auto number = [&]() -> int64_t {
        int64_t v = -1;
        while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') v = std::min<int64_t>((v < 0 ? 0 : v) * 10 + (p_[i_++] - '0'), 1 << 20);
        return v;
      };
      const int64_t a1 = number();
      int64_t a2 = a1;
      if (at(',')) ++i_, a2 = number();
      if (a1 < 0 || !at('}')) {  // not a quantifier: a literal '{' (Annex B)
        i_ = start;
        return a;
      }
      ++i_;
      if (a2 >= 0 && a2 < a1) return error("a {n,m} with m < n");
      if (a1 > 100000 || a2 > 100000) return error("a repeat count above 100000");
      min = static_cast<int32_t>(a1), max = static_cast<int32_t>(a2);
    } else {
      return a;
    }
    if (at('?')) ++i_;  // lazy: the same language
    if (at('*') || at('+') || at('?') || at('{')) return error("a quantifier after a quantifier");
    return repeat(std::move(a), min, max);
  }

  Result<ExprPtr> atom(int depth) {
    const char32_t c = p_[i_++];
    switch (c) {
      case '(': {
        if (at('?')) {
          if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') i_ += 2;
          else if (i_ + 1 < p_.size() && p_[i_ + 1] == '<' && i_ + 2 < p_.size() && p_[i_ + 2] != '=' && p_[i_ + 2] != '!') {
            while (i_ < p_.size() && p_[i_] != '>') ++i_;  // a named group: the name is skipped
            if (i_ == p_.size()) return error("an unterminated group name");
            ++i_;
          } else {
            return error("a lookaround or flag group");
          }
        }
        OG_ASSIGN_OR_RETURN(ExprPtr inner, alternation(depth + 1));
        if (!at(')')) return error("an unterminated group");
        ++i_;
        return inner;
      }
      case '[': {
        OG_ASSIGN_OR_RETURN(Ranges r, klass());
        return chars(r);
      }
      case '.': return chars(complement(kLineTerminators));
      case '\\': {
        OG_ASSIGN_OR_RETURN(Ranges r, escape(false));
        return chars(r);
      }
      case '^': case '$': --i_; return error("an anchor");
      case '*': case '+': case '?': --i_; return error("a quantifier with nothing before it");
      case ')': --i_; return error("an unmatched ')'");
      default: return chars({{c, c}});
    }
  }

  // After a backslash; in a class, \b is a backspace and \B is refused.
  Result<Ranges> escape(bool in_class) {
    if (i_ >= p_.size()) return error("a trailing backslash");
    const char32_t c = p_[i_++];
    switch (c) {
      case 'd': return kDigit;
      case 'D': return complement(kDigit);
      case 'w': return kWord;
      case 'W': return complement(kWord);
      case 's': return kSpace;
      case 'S': return complement(kSpace);
      case 't': return Ranges{{'\t', '\t'}};
      case 'n': return Ranges{{'\n', '\n'}};
      case 'r': return Ranges{{'\r', '\r'}};
      case 'f': return Ranges{{'\f', '\f'}};
      case 'v': return Ranges{{'\v', '\v'}};
      case '0': return Ranges{{0, 0}};
      case 'b':
        if (in_class) return Ranges{{'\b', '\b'}};
        --i_;
        return error("a word boundary");
      case 'x': case 'u': {
        char32_t v = 0;
        int digits = c == 'x' ? 2 : 4;
        const bool braces = c == 'u' && at('{');
        if (braces) ++i_, digits = 6;
        int read = 0;
        while (read < digits && i_ < p_.size() && std::isxdigit(static_cast<int>(p_[i_] < 128 ? p_[i_] : 0))) {
          const char32_t h = p_[i_++];
          v = v * 16 + static_cast<char32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          ++read;
        }
        if (braces && at('}')) ++i_;
        else if (braces || read != digits) return error("a bad \\x or \\u escape");
        if (v > kMaxCode) return error("a code point past U+10FFFF");
        return Ranges{{v, v}};
      }
      default:
        if ((c >= '1' && c <= '9') || c == 'k') {
          --i_;
          return error("a backreference");
        }
        if (c == 'B' || c == 'c' || c == 'p' || c == 'P') {
          --i_;
          return error(fmt::format("'\\{}'", static_cast<char>(c)));
        }
        return Ranges{{c, c}};  // an escaped literal
    }
  }

  Result<Ranges> klass() {
    const bool negated = at('^');
    if (negated) ++i_;
    Ranges r;
    while (i_ < p_.size() && !at(']')) {  // "[]" matches nothing, "[^]" anything (ECMAScript)
      Ranges lo_set;
      char32_t lo = 0;
      bool single = true;
      if (at('\\')) {
        ++i_;
        OG_ASSIGN_OR_RETURN(lo_set, escape(true));
        single = lo_set.size() == 1 && lo_set[0].first == lo_set[0].second;
        lo = lo_set[0].first;
      } else {
        lo = p_[i_++];
        lo_set = {{lo, lo}};
      }
      if (single && at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        char32_t hi = 0;
        if (at('\\')) {
          ++i_;
          OG_ASSIGN_OR_RETURN(Ranges h, escape(true));
          if (!(h.size() == 1 && h[0].first == h[0].second)) return error("a class range ending in a class");
          hi = h[0].first;
        } else {
          hi = p_[i_++];
        }
        if (hi < lo) return error("a class range out of order");
        r.emplace_back(lo, hi);
      } else {
        r.insert(r.end(), lo_set.begin(), lo_set.end());
      }
    }
    if (!at(']')) return error("an unterminated class");
    ++i_;
    return negated ? complement(r) : normalized(r);
  }

  // The characters of `r` as the string writes them (JSON-escaped, or raw).
  ExprPtr chars(const Ranges& r) const { return python_ ? python_chars(r) : json_chars(r, raw_without_); }

  std::u32string p_;
  std::optional<char32_t> raw_without_;
  bool python_ = false;
  size_t i_ = 0;
};

// UTF-8 to code points (an invalid byte stands for itself, as U+FFFD would hide it).
std::u32string code_points(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    const int n = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    if (n == 1 || i + static_cast<size_t>(n) > s.size()) {
      out.push_back(b);
      ++i;
      continue;
    }
    char32_t c = b & (0x7F >> n);
    for (int k = 1; k < n; ++k) c = (c << 6) | (static_cast<uint8_t>(s[i + static_cast<size_t>(k)]) & 0x3F);
    out.push_back(c);
    i += static_cast<size_t>(n);
  }
  return out;
}

std::optional<char32_t> first_character(std::string_view quote) {
  if (quote.empty()) return std::nullopt;
  return code_points(quote)[0];
}

}  // namespace

Result<ExprPtr> regex_string_contents(std::string_view pattern, std::string_view raw_quote) {
  return Parser(code_points(pattern), first_character(raw_quote)).whole();
}

Result<ExprPtr> regex_python_string_contents(std::string_view pattern) {
  return Parser(code_points(pattern), std::nullopt, /*python=*/true).whole();
}

ExprPtr raw_char_outside(std::string_view quote) { return json_chars({{0, kMaxCode}}, first_character(quote).value_or(kMaxCode + 1)); }

}  // namespace og::constrain
