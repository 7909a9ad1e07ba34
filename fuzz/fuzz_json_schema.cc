// JSON Schema compiler and matcher: the input is a schema's text, a NUL byte, then bytes the
// matcher reads one by one. Every mask the per-state cache gives must equal the plain trie
// walk's over a small vocabulary (all single bytes and some longer tokens), and every byte the
// mask allows must read. Hostile schemas must end in an error, never a hang or a crash.
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "constrain/token_mask.h"

namespace {

std::shared_ptr<const og::constrain::TokenTrie> vocabulary() {
  static const auto trie = [] {
    std::vector<std::optional<std::string>> v;
    for (int b = 0; b < 256; ++b) v.emplace_back(std::string(1, static_cast<char>(b)));
    for (const char* t : {"{\"", "\":", "\",", "\"}", "\": \"", "true", "null", "12", "-0.", "e+", "[{", "}]", "],", "\\u00",
                          "\\\"", "\xC3\xA9", "\xE6\x97", "\xA5\"", "  ", "\n  ", "{}", "[]", "\"a\"", "ab", "\"\"", ", \""})
      v.emplace_back(t);
    v.emplace_back(std::nullopt);  // a special token
    return std::make_shared<const og::constrain::TokenTrie>(v);
  }();
  return trie;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const auto schema = nlohmann::ordered_json::parse(input.substr(0, nul), nullptr, false);
  if (schema.is_discarded()) return 0;
  auto g = og::constrain::compile_json_schema(schema);
  if (!g.is_ok() || (*g)->matches_nothing()) return 0;
  const og::constrain::GrammarMasks masks(*g, vocabulary());
  og::constrain::Matcher m(*g);
  const std::string text = nul == std::string::npos ? "" : input.substr(nul + 1);
  for (size_t i = 0; i <= text.size() && i < 256; ++i) {
    const og::constrain::TokenMask plain = og::constrain::allowed_tokens(m, masks.trie());
    if (masks.allowed(m) != plain) std::abort();  // the cache disagrees with the definition
    for (int b = 0; b < 256; ++b)  // token b is the single byte b
      if (og::constrain::mask_has(plain, b) != m.allows(static_cast<uint8_t>(b)) && og::constrain::mask_has(plain, b))
        std::abort();
    if (i == text.size() || !m.advance(static_cast<uint8_t>(text[i]))) break;
  }
  return 0;
}
