#include "constrain/value_notation.h"

#include <algorithm>

#include <fmt/format.h>

namespace og::constrain {

std::vector<std::string> notation_key_order(std::vector<std::string> keys, const ValueNotation& n) {
  if (!n.sorted_keys) return keys;
  // jinja's dictsort compares keys lower-cased (ASCII here), keeping equal ones in their order.
  const auto lower = [](std::string s) {
    for (char& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
  };
  std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) { return lower(a) < lower(b); });
  return keys;
}

std::string python_string_repr(const std::string& s) {
  const char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, q);
  for (const char c : s) {
    const auto b = static_cast<uint8_t>(c);
    if (c == q || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (b < 0x20 || b == 0x7F) out += fmt::format("\\x{:02x}", b);
    else out += c;  // (non-ASCII kept as UTF-8: printable, as repr keeps it)
  }
  return out + q;
}

std::string notation_text(const nlohmann::ordered_json& v, const ValueNotation& n) {
  if (n.python) {
    if (v.is_string()) return python_string_repr(v.get<std::string>());
    if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
    if (v.is_null()) return "None";
  }
  const std::string comma = n.python ? ", " : ",", colon = n.python ? ": " : ":";
  if (v.is_string()) return n.quote + v.get<std::string>() + n.quote;
  if (v.is_object()) {
    std::vector<std::string> keys;
    for (const auto& [k, _] : v.items()) keys.push_back(k);
    std::string out = "{";
    for (const std::string& k : notation_key_order(std::move(keys), n)) {
      if (out.size() > 1) out += comma;
      out += (n.python ? python_string_repr(k) : k) + colon + notation_text(v.at(k), n);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& x : v) {
      if (out.size() > 1) out += comma;
      out += notation_text(x, n);
    }
    return out + "]";
  }
  return v.dump();  // numbers, true, false, null
}

}  // namespace og::constrain
