#include "constrain/json_grammar.h"

#include <algorithm>
#include <bitset>
#include <functional>

#include <nlohmann/json.hpp>

namespace og::constrain {
namespace {

using R = std::pair<uint8_t, uint8_t>;
ExprPtr one_of(std::vector<R> r) { return byte_ranges(std::move(r)); }
ExprPtr ch(char c) { return lit(std::string_view(&c, 1)); }

// `r` without the bytes in `out`.
std::vector<R> minus(const std::vector<R>& r, const std::bitset<256>& out) {
  std::vector<R> kept;
  for (auto [lo, hi] : r)
    for (int b = lo; b <= hi; ++b) {
      if (out[static_cast<size_t>(b)]) continue;
      if (!kept.empty() && kept.back().second + 1 == b) kept.back().second = static_cast<uint8_t>(b);
      else kept.emplace_back(static_cast<uint8_t>(b), static_cast<uint8_t>(b));
    }
  return kept;
}

// One character of a JSON string whose first byte is not in `excluded`: unescaped UTF-8 (RFC
// 3629: no overlongs, no surrogates) or an escape. A \u escape stays outside the surrogates (a
// lone one is refused by strict parsers; characters past U+FFFF are written as raw UTF-8).
ExprPtr string_char(const std::bitset<256>& excluded) {
  const ExprPtr cont = one_of({{0x80, 0xBF}});
  const auto lead = [&](std::vector<R> r, std::vector<ExprPtr> after) {
    r = minus(r, excluded);
    if (r.empty()) return alt({});
    after.insert(after.begin(), one_of(std::move(r)));
    return seq(std::move(after));
  };
  const ExprPtr hex = one_of({{'0', '9'}, {'a', 'f'}, {'A', 'F'}});
  const ExprPtr not_d = one_of({{'0', '9'}, {'a', 'c'}, {'A', 'C'}, {'e', 'f'}, {'E', 'F'}});
  const ExprPtr escape_tail = alt({one_of({{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', 'b'}, {'f', 'f'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}}),
                                   seq({ch('u'), alt({seq({not_d, hex, hex, hex}), seq({one_of({{'d', 'd'}, {'D', 'D'}}), one_of({{'0', '7'}}), hex, hex})})})});
  return alt({
      lead({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x7F}}, {}),
      lead({{'\\', '\\'}}, {escape_tail}),
      lead({{0xC2, 0xDF}}, {cont}),
      lead({{0xE0, 0xE0}}, {one_of({{0xA0, 0xBF}}), cont}),
      lead({{0xE1, 0xEC}, {0xEE, 0xEF}}, {cont, cont}),
      lead({{0xED, 0xED}}, {one_of({{0x80, 0x9F}}), cont}),
      lead({{0xF0, 0xF0}}, {one_of({{0x90, 0xBF}}), cont, cont}),
      lead({{0xF1, 0xF3}}, {cont, cont, cont}),
      lead({{0xF4, 0xF4}}, {one_of({{0x80, 0x8F}}), cont, cont}),
  });
}

ExprPtr digits(int32_t min, int32_t max) { return repeat(one_of({{'0', '9'}}), min, max); }

}  // namespace

Result<JsonRules> add_json_rules(Grammar& g) {
  JsonRules r;
  r.string = g.add_rule("string");
  r.integer = g.add_rule("integer");
  r.number = g.add_rule("number");
  r.value = g.add_rule("value");
  const int32_t object = g.add_rule("object"), array = g.add_rule("array");
  r.ws = alt({seq({}), ch(' '), seq({repeat(ch('\n'), 1, 2), repeat(one_of({{' ', ' '}, {'\t', '\t'}}), 0, 20)})});
  r.chr = string_char({});
  OG_TRY(g.define(r.string, seq({ch('"'), star(r.chr), ch('"')})));
  const ExprPtr int_part = seq({opt(ch('-')), alt({ch('0'), seq({one_of({{'1', '9'}}), digits(0, 15)})})});
  OG_TRY(g.define(r.integer, int_part));
  OG_TRY(g.define(r.number, seq({call(r.integer), opt(seq({ch('.'), digits(1, 16)})),
                                 opt(seq({one_of({{'e', 'e'}, {'E', 'E'}}), opt(one_of({{'+', '+'}, {'-', '-'}})), digits(1, 3)}))})));
  const ExprPtr& ws = r.ws;
  const ExprPtr member = seq({call(r.string), ws, ch(':'), ws, call(r.value)});
  OG_TRY(g.define(object, seq({ch('{'), ws, opt(seq({member, ws, star(seq({ch(','), ws, member, ws}))})), ch('}')})));
  const ExprPtr element = call(r.value);
  OG_TRY(g.define(array, seq({ch('['), ws, opt(seq({element, ws, star(seq({ch(','), ws, element, ws}))})), ch(']')})));
  OG_TRY(g.define(r.value, alt({call(object), call(array), call(r.string), call(r.number), lit("true"), lit("false"), lit("null")})));
  return r;
}

std::string json_key_literal(const std::string& key) { return nlohmann::json(key).dump(); }

// A trie of the names' written forms: at each node, a string may go on along a name, leave
// every name with a character no name has there (then anything), or end where no name does.
ExprPtr key_except(const std::vector<std::string>& names, const ExprPtr& chr) {
  std::vector<std::string> written;
  for (const std::string& n : names) {
    const std::string lit = json_key_literal(n);
    written.push_back(lit.substr(1, lit.size() - 2));
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  // Names in [begin, end) share their first `depth` bytes.
  std::function<ExprPtr(size_t, size_t, size_t)> node = [&](size_t begin, size_t end, size_t depth) -> ExprPtr {
    std::bitset<256> next;
    bool a_name_ends = false;
    for (size_t i = begin; i < end; ++i) {
      if (written[i].size() == depth) a_name_ends = true;
      else next[static_cast<uint8_t>(written[i][depth])] = true;
    }
    std::vector<ExprPtr> alts;
    if (!a_name_ends) alts.push_back(ch('"'));
    alts.push_back(seq({string_char(next), star(chr), ch('"')}));
    for (size_t i = begin; i < end;) {
      if (written[i].size() == depth) {
        ++i;
        continue;
      }
      const char b = written[i][depth];
      size_t j = i;
      while (j < end && written[j].size() > depth && written[j][depth] == b) ++j;
      alts.push_back(seq({ch(b), node(i, j, depth + 1)}));
      i = j;
    }
    return alt(std::move(alts));
  };
  return seq({ch('"'), node(0, written.size(), 0)});
}

}  // namespace og::constrain
