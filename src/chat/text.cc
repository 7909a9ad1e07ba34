#include "chat/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace og::chat {

std::u32string utf8_decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    char32_t c = len == 1 ? b : b & (0x7F >> len);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      const auto cb = static_cast<unsigned char>(s[i + k]);
      if ((cb & 0xC0) != 0x80) ok = false;
      c = (c << 6) | (cb & 0x3F);
    }
    out.push_back(ok ? c : 0xFFFD);
    i += ok ? len : 1;
  }
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

bool py_isprintable(char32_t c) {
  if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0xA0) || c == 0xAD) return false;
  if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F)) return false;
  if ((c >= 0x205F && c <= 0x206F) || c == 0x3000 || c == 0xFEFF) return false;
  if ((c >= 0xD800 && c <= 0xF8FF) || (c >= 0xFFF9 && c <= 0xFFFB) || c >= 0xF0000) return false;
  return true;
}

std::string py_strip(std::string_view s, const std::optional<std::string>& chars, bool left,
                     bool right) {
  const std::u32string u = utf8_decode(s);
  const std::u32string set = chars ? utf8_decode(*chars) : std::u32string();
  auto strip_it = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : py_isspace(c);
  };
  size_t b = 0, e = u.size();
  while (left && b < e && strip_it(u[b])) ++b;
  while (right && e > b && strip_it(u[e - 1])) --e;
  return encode_utf8(std::u32string_view(u).substr(b, e - b));
}

std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep,
                                  int64_t maxsplit, bool from_right) {
  std::vector<std::string> parts;
  if (maxsplit < 0) maxsplit = INT64_MAX;
  if (!sep) {
    // Whitespace mode: runs of whitespace separate, and no empty strings come out.
    std::u32string u = utf8_decode(s);
    if (from_right) std::reverse(u.begin(), u.end());
    size_t i = 0;
    while (true) {
      while (i < u.size() && py_isspace(u[i])) ++i;
      if (i == u.size()) break;
      if (static_cast<int64_t>(parts.size()) == maxsplit) {
        size_t e = u.size();
        while (e > i && py_isspace(u[e - 1])) --e;
        parts.push_back(encode_utf8(std::u32string_view(u).substr(i, e - i)));
        break;
      }
      size_t j = i;
      while (j < u.size() && !py_isspace(u[j])) ++j;
      parts.push_back(encode_utf8(std::u32string_view(u).substr(i, j - i)));
      i = j;
    }
    if (from_right) {
      std::reverse(parts.begin(), parts.end());
      for (auto& p : parts) {
        std::u32string r = utf8_decode(p);
        std::reverse(r.begin(), r.end());
        p = encode_utf8(r);
      }
    }
    return parts;
  }
  // Separator mode works on bytes: a valid UTF-8 needle only matches at code point starts.
  const std::string& d = *sep;
  if (!from_right) {
    size_t pos = 0;
    while (static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t hit = s.find(d, pos);
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(pos, hit - pos));
      pos = hit + d.size();
    }
    parts.emplace_back(s.substr(pos));
    return parts;
  }
  size_t end = s.size();
  int64_t splits = 0;
  while (splits < maxsplit && end >= d.size()) {
    const size_t hit = s.rfind(d, end - d.size());
    if (hit == std::string_view::npos) break;
    parts.emplace_back(s.substr(hit + d.size(), end - hit - d.size()));
    end = hit;
    ++splits;
  }
  parts.emplace_back(s.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view repl,
                       int64_t count) {
  if (count < 0) count = INT64_MAX;
  std::string out;
  if (old.empty()) {
    const std::u32string u = utf8_decode(s);
    int64_t done = 0;
    for (char32_t c : u) {
      if (done++ < count) out += repl;
      append_utf8(out, c);
    }
    if (done < count) out += repl;
    return out;
  }
  size_t pos = 0;
  for (int64_t n = 0; n < count; ++n) {
    const size_t hit = s.find(old, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos)).append(repl);
    pos = hit + old.size();
  }
  out.append(s.substr(pos));
  return out;
}

std::string py_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  return out;
}

std::string py_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

std::string py_title(std::string_view s) {
  std::string out(s);
  bool prev_cased = false;  // Python starts a new word after any uncased character
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') {
      if (!prev_cased) c = static_cast<char>(c - 32);
      prev_cased = true;
    } else if (c >= 'A' && c <= 'Z') {
      if (prev_cased) c = static_cast<char>(c + 32);
      prev_cased = true;
    } else {
      // Non-ASCII bytes count as letters so "élan" keeps one word (case itself is ASCII only).
      prev_cased = (static_cast<unsigned char>(c) & 0x80) != 0;
    }
  }
  return out;
}

std::string py_capitalize(std::string_view s) {
  std::string out = py_lower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

std::string py_repr_string(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : utf8_decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (py_isprintable(c) || c == ' ') {
      append_utf8(out, c);
    } else if (c <= 0xFF) {
      out += fmt::format("\\x{:02x}", static_cast<uint32_t>(c));
    } else if (c <= 0xFFFF) {
      out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
    } else {
      out += fmt::format("\\U{:08x}", static_cast<uint32_t>(c));
    }
  }
  out += quote;
  return out;
}

std::string py_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form, then laid out the way repr() does.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e_pos = sci.find('e');
  const int exp = std::stoi(sci.substr(e_pos + 1));
  std::string digits = sci.substr(0, e_pos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exp < -4 || exp >= 16) {
    std::string m = digits.substr(0, 1);
    if (digits.size() > 1) m += "." + digits.substr(1);
    return sign + m + fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  }
  const int point = exp + 1;  // digits before the decimal point
  const int n = static_cast<int>(digits.size());
  if (point <= 0) return sign + "0." + std::string(-point, '0') + digits;
  if (point >= n) return sign + digits + std::string(point - n, '0') + ".0";
  return sign + digits.substr(0, point) + "." + digits.substr(point);
}

SliceIndices adjust_slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                          std::optional<int64_t> step, int64_t n) {
  SliceIndices r{};
  r.step = std::max<int64_t>(step.value_or(1), -INT64_MAX);  // so that -step cannot overflow
  auto clamp = [&](std::optional<int64_t> v, int64_t def_pos, int64_t def_neg) {
    if (!v) return r.step > 0 ? def_pos : def_neg;
    int64_t i = *v;
    if (i < 0) {
      i += n;
      if (i < 0) i = r.step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = r.step < 0 ? n - 1 : n;
    }
    return i;
  };
  r.start = clamp(start, 0, n - 1);
  r.stop = clamp(stop, n, -1);
  if (r.step > 0) {
    r.count = r.stop > r.start ? (r.stop - r.start - 1) / r.step + 1 : 0;
  } else {
    r.count = r.stop < r.start ? (r.start - r.stop - 1) / (-r.step) + 1 : 0;
  }
  return r;
}

}  // namespace og::chat
