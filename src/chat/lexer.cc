#include "chat/lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "chat/text.h"

namespace og::chat {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Length of the Python-whitespace code point at s[pos], or 0.
size_t space_at(const std::string& s, size_t pos) {
  if (pos >= s.size()) return 0;
  const auto b = static_cast<unsigned char>(s[pos]);
  if (b < 0x80) return py_isspace(b) ? 1 : 0;
  const size_t len = (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  const std::u32string c = utf8_decode(std::string_view(s).substr(pos, len));
  return c.size() == 1 && py_isspace(c[0]) ? len : 0;
}

size_t skip_spaces(const std::string& s, size_t pos) {
  while (size_t n = space_at(s, pos)) pos += n;
  return pos;
}

bool all_space(std::string_view s) {
  if (s.empty()) return false;  // `\s+` needs at least one character
  for (char32_t c : utf8_decode(s)) {
    if (!py_isspace(c)) return false;
  }
  return true;
}

// Decodes a string literal body the way Jinja does (Python's unicode-escape).
Result<std::string> unescape(std::string_view body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    auto hex = [&](int digits) -> Result<char32_t> {
      std::string h(body.substr(i + 1, digits));
      if (static_cast<int>(h.size()) != digits ||
          !std::all_of(h.begin(), h.end(), [](char x) { return std::isxdigit(static_cast<unsigned char>(x)); })) {
        return bad_input("line {}: truncated \\x/\\u escape in string literal", line);
      }
      i += digits;
      return static_cast<char32_t>(std::strtoul(h.c_str(), nullptr, 16));
    };
    switch (c) {
      case '\n': break;  // line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': case 'u': case 'U': {
        OG_ASSIGN_OR_RETURN(char32_t cp, hex(c == 'x' ? 2 : c == 'u' ? 4 : 8));
        if (cp > 0x10FFFF) return bad_input("line {}: illegal Unicode character in string literal", line);
        append_utf8(out, cp);
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          char32_t cp = c - '0';
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            cp = cp * 8 + (body[++i] - '0');
          }
          append_utf8(out, cp);
        } else {
          out += '\\';  // Python keeps unknown escapes verbatim
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') newlines_.push_back(i);
    }
  }

  Result<std::vector<Segment>> run() {
    size_t pos = 0;
    bool line_starting = true;  // did the previous tag end with a newline?
    while (pos < src_.size()) {
      size_t p = pos;
      while ((p = src_.find('{', p)) != std::string::npos && p + 1 < src_.size() &&
             src_[p + 1] != '{' && src_[p + 1] != '%' && src_[p + 1] != '#') {
        ++p;
      }
      if (p == std::string::npos || p + 1 >= src_.size()) {
        add_text(src_.substr(pos), pos);
        break;
      }
      std::string text = src_.substr(pos, p - pos);
      const char kind = src_[p + 1];
      size_t q = p + 2;
      const char sign = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q++] : 0;
      if (sign == '-') {
        text = py_strip(text, std::nullopt, false, true);
      } else if (sign != '+' && kind != '{') {  // lstrip_blocks: not for {{ }}
        const size_t l_pos = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((l_pos > 0 || line_starting) && all_space(std::string_view(text).substr(l_pos))) {
          text.resize(l_pos);
        }
      }
      add_text(text, pos);
      size_t end = 0;
      if (kind == '#') {
        OG_ASSIGN_OR_RETURN(end, comment(q, p));
      } else if (kind == '%' && raw_begin(q, &end)) {
        OG_ASSIGN_OR_RETURN(end, raw(end));
      } else {
        OG_ASSIGN_OR_RETURN(end, tag(kind, q, p));
      }
      line_starting = end > 0 && src_[end - 1] == '\n';
      pos = end;
    }
    return std::move(segments_);
  }

 private:
  int line_at(size_t pos) const {
    return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), pos) - newlines_.begin());
  }

  void add_text(std::string text, size_t pos) {
    if (text.empty()) return;
    Segment s;
    s.kind = Segment::Kind::kText;
    s.line = line_at(pos);
    s.text = std::move(text);
    segments_.push_back(std::move(s));
  }

  // After a `%}` or `#}` at `pos` (past it) with strip sign `sign`: where the next data starts.
  size_t after_end(size_t pos, char sign, bool trim_newline) const {
    if (sign == '-') return skip_spaces(src_, pos);
    if (sign != '+' && trim_newline && pos < src_.size() && src_[pos] == '\n') return pos + 1;
    return pos;
  }

  Result<size_t> comment(size_t q, size_t start) {
    const size_t e = src_.find("#}", q);
    if (e == std::string::npos) return bad_input("line {}: missing end of comment tag", line_at(start));
    const char sign = e > q && (src_[e - 1] == '-' || src_[e - 1] == '+') ? src_[e - 1] : 0;
    return after_end(e + 2, sign, true);
  }

  // `{% raw %}` (also `{%- raw -%}`): the tag name must be exactly raw.
  bool raw_begin(size_t q, size_t* end) const {
    size_t i = skip_spaces(src_, q);
    if (src_.compare(i, 3, "raw") != 0 || (i + 3 < src_.size() && is_name_char(src_[i + 3]))) return false;
    i = skip_spaces(src_, i + 3);
    if (src_.compare(i, 3, "-%}") == 0) *end = skip_spaces(src_, i + 3);
    else if (src_.compare(i, 2, "%}") == 0) *end = i + 2;  // Jinja applies no trim_blocks here
    else return false;
    return true;
  }

  Result<size_t> raw(size_t body) {
    for (size_t p = src_.find("{%", body); p != std::string::npos; p = src_.find("{%", p + 1)) {
      size_t i = p + 2;
      const char sign = i < src_.size() && (src_[i] == '-' || src_[i] == '+') ? src_[i++] : 0;
      i = skip_spaces(src_, i);
      if (src_.compare(i, 6, "endraw") != 0) continue;
      i = skip_spaces(src_, i + 6);
      char end_sign = 0;
      if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) end_sign = src_[i++];
      if (src_.compare(i, 2, "%}") != 0) continue;
      std::string text = src_.substr(body, p - body);
      if (sign == '-') {
        text = py_strip(text, std::nullopt, false, true);
      } else if (sign != '+') {
        const size_t l_pos = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        const bool starting = body > 0 && src_[body - 1] == '\n';
        if ((l_pos > 0 || starting) && all_space(std::string_view(text).substr(l_pos))) text.resize(l_pos);
      }
      add_text(std::move(text), body);
      return after_end(i + 2, end_sign, true);
    }
    return bad_input("line {}: missing end of raw directive", line_at(body));
  }

  // Tokens of a {{ }} or {% %} tag up to its end marker (ignored inside brackets, as Jinja does).
  Result<size_t> tag(char kind, size_t q, size_t start) {
    Segment seg;
    seg.kind = kind == '{' ? Segment::Kind::kOutput : Segment::Kind::kStatement;
    seg.line = line_at(start);
    const std::string_view close = kind == '{' ? "}}" : "%}";
    const std::string_view dash_close = kind == '{' ? "-}}" : "-%}";
    std::vector<char> brackets;
    size_t i = q;
    while (true) {
      i = skip_spaces(src_, i);
      if (i >= src_.size()) {
        return bad_input("line {}: unexpected end of template inside '{}{}' tag", seg.line, '{', kind);
      }
      const int line = line_at(i);
      if (brackets.empty()) {
        if (src_.compare(i, 3, dash_close) == 0) {
          i = skip_spaces(src_, i + 3);
          break;
        }
        if (kind == '%' && src_.compare(i, 3, "+%}") == 0) {
          i += 3;
          break;
        }
        if (src_.compare(i, 2, close) == 0) {
          i = after_end(i + 2, 0, kind == '%');
          break;
        }
      }
      Token t;
      t.line = line;
      OG_ASSIGN_OR_RETURN(i, token(i, &t, brackets));
      seg.tokens.push_back(std::move(t));
    }
    Token end;
    end.line = line_at(i == 0 ? 0 : i - 1);
    seg.tokens.push_back(end);
    segments_.push_back(std::move(seg));
    return i;
  }

  Result<size_t> token(size_t i, Token* t, std::vector<char>& brackets) {
    const char c = src_[i];
    if (is_digit(c)) return number(i, t);
    if (is_name_start(c)) {
      size_t j = i;
      while (j < src_.size() && is_name_char(src_[j])) ++j;
      t->kind = TokenKind::kName;
      t->text = src_.substr(i, j - i);
      return j;
    }
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < src_.size() && src_[j] != c) j += src_[j] == '\\' ? 2 : 1;
      if (j >= src_.size()) return bad_input("line {}: unterminated string literal", t->line);
      t->kind = TokenKind::kString;
      OG_ASSIGN_OR_RETURN(t->text, unescape(std::string_view(src_).substr(i + 1, j - i - 1), t->line));
      return j + 1;
    }
    static const char* kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~",
                                 "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"};
    for (const char* op : kOps) {
      const std::string_view o(op);
      if (src_.compare(i, o.size(), o) != 0) continue;
      if (o == "(" || o == "[" || o == "{") brackets.push_back(o == "(" ? ')' : o == "[" ? ']' : '}');
      if (o == ")" || o == "]" || o == "}") {
        if (brackets.empty() || brackets.back() != o[0]) {
          return bad_input("line {}: unexpected '{}'", t->line, o);
        }
        brackets.pop_back();
      }
      t->kind = TokenKind::kOp;
      t->text = std::string(o);
      return i + o.size();
    }
    return bad_input("line {}: unexpected character '{}' in tag", t->line, c);
  }

  // Jinja's float_re / integer_re, with '_' digit separators; a float never follows a '.'.
  Result<size_t> number(size_t i, Token* t) {
    auto digits = [&](size_t j) {
      while (j < src_.size() && (is_digit(src_[j]) || (src_[j] == '_' && j + 1 < src_.size() && is_digit(src_[j + 1])))) ++j;
      return j;
    };
    size_t j = digits(i);
    size_t k = j;
    bool is_float = false;
    if (i == 0 || src_[i - 1] != '.') {
      if (k + 1 < src_.size() && src_[k] == '.' && is_digit(src_[k + 1])) {
        k = digits(k + 1);
        is_float = true;
      }
      if (k < src_.size() && (src_[k] == 'e' || src_[k] == 'E')) {
        size_t e = k + 1;
        if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
        if (e < src_.size() && is_digit(src_[e])) {
          k = digits(e);
          is_float = true;
        }
      }
    }
    std::string text = src_.substr(i, (is_float ? k : j) - i);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    if (is_float) {
      t->kind = TokenKind::kFloat;
      t->float_value = std::strtod(text.c_str(), nullptr);
      return k;
    }
    t->kind = TokenKind::kInt;
    errno = 0;
    t->int_value = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return unsupported("line {}: integer literal {} is out of range", t->line, text);
    return j;
  }

  std::string src_;
  std::vector<size_t> newlines_;  // positions of '\n', for line numbers
  std::vector<Segment> segments_;
};

}  // namespace

Result<std::vector<Segment>> lex_template(std::string_view source) {
  // Jinja turns \r\n and \r into \n and drops one trailing newline (keep_trailing_newline=False).
  std::string src;
  src.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      src += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      src += source[i];
    }
  }
  if (!src.empty() && src.back() == '\n') src.pop_back();
  return Lexer(std::move(src)).run();
}

}  // namespace og::chat
