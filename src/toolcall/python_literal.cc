#include "toolcall/python_literal.h"

#include <cstdlib>

#include "base/utf8.h"

namespace og::toolcall {
namespace {

using ojson = nlohmann::ordered_json;

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  std::optional<ojson> value(int depth) {
    if (depth > 64) return std::nullopt;
    ws();
    if (i_ >= s_.size()) return std::nullopt;
    const char c = s_[i_];
    if (c == '{') return dict(depth);
    if (c == '[' || c == '(') return list(depth, c == '[' ? ']' : ')');
    if (c == '\'' || c == '"') return string();
    for (auto [word, v] : {std::pair{"True", ojson(true)}, std::pair{"False", ojson(false)}, std::pair{"None", ojson(nullptr)}})
      if (s_.substr(i_).starts_with(word)) {
        i_ += std::string_view(word).size();
        return v;
      }
    return number();
  }
  bool at_end() {
    ws();
    return i_ == s_.size();
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  std::optional<ojson> dict(int depth) {
    ++i_;
    ojson out = ojson::object();
    if (eat('}')) return out;
    for (;;) {
      auto k = value(depth + 1);
      if (!k || !k->is_string() || !eat(':')) return std::nullopt;
      auto v = value(depth + 1);
      if (!v) return std::nullopt;
      out[k->get<std::string>()] = std::move(*v);
      if (eat('}')) return out;
      if (!eat(',')) return std::nullopt;
      if (eat('}')) return out;  // a trailing comma
    }
  }
  std::optional<ojson> list(int depth, char close) {
    ++i_;
    ojson out = ojson::array();
    if (eat(close)) return out;
    for (;;) {
      auto v = value(depth + 1);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
      if (eat(close)) return out;
      if (!eat(',')) return std::nullopt;
      if (eat(close)) return out;
    }
  }
  std::optional<ojson> string() {
    const char q = s_[i_++];
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return std::nullopt;
      c = s_[i_++];
      const auto hex = [&](int n) -> std::optional<char32_t> {
        if (i_ + n > s_.size()) return std::nullopt;
        char32_t v = 0;
        for (int k = 0; k < n; ++k) {
          const char h = s_[i_++];
          const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (d < 0) return std::nullopt;
          v = v * 16 + static_cast<char32_t>(d);
        }
        return v;
      };
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case 'x':
        case 'u':
        case 'U': {
          auto v = hex(c == 'x' ? 2 : c == 'u' ? 4 : 8);
          if (!v) return std::nullopt;
          out += encode_utf8(std::u32string(1, *v));
          break;
        }
        default: out += c;  // \\ \' \"
      }
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return ojson(out);
  }
  std::optional<ojson> number() {
    const size_t b = i_;
    if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '+')) ++i_;
    while (i_ < s_.size() && ((s_[i_] >= '0' && s_[i_] <= '9') || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E' ||
                              ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
      ++i_;
    if (i_ == b) return std::nullopt;
    auto j = ojson::parse(s_.substr(b, i_ - b), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_number()) return std::nullopt;
    return j;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

std::optional<nlohmann::ordered_json> python_literal(std::string_view text) {
  Reader r(text);
  auto v = r.value(0);
  if (!v || !r.at_end()) return std::nullopt;
  return v;
}

}  // namespace og::toolcall
