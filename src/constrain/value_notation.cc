#include "constrain/value_notation.h"

#include <algorithm>

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

std::string notation_text(const nlohmann::ordered_json& v, const ValueNotation& n) {
  if (v.is_string()) return n.quote + v.get<std::string>() + n.quote;
  if (v.is_object()) {
    std::vector<std::string> keys;
    for (const auto& [k, _] : v.items()) keys.push_back(k);
    std::string out = "{";
    for (const std::string& k : notation_key_order(std::move(keys), n)) {
      if (out.size() > 1) out += ',';
      out += k + ":" + notation_text(v.at(k), n);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& x : v) {
      if (out.size() > 1) out += ',';
      out += notation_text(x, n);
    }
    return out + "]";
  }
  return v.dump();  // numbers, true, false, null
}

}  // namespace og::constrain
