#include "generate/grammar_cache.h"

#include <fmt/format.h>

#include "constrain/json_schema.h"

namespace og::generate {

GrammarCache::GrammarCache(tokenizer::Tokenizer tokenizer, size_t capacity)
    : tokenizer_(std::move(tokenizer)),
      capacity_(capacity),
      json_library_(std::make_shared<constrain::SharedStateTokens>(constrain::json_library_states())) {
  std::vector<std::string> texts;
  for (int32_t id = 0; id < tokenizer_.vocab_size(); ++id)
    if (tokenizer_.is_special(id)) texts.push_back(tokenizer_.decode(std::span<const int32_t>(&id, 1), false));
  specials_ = constrain::SpecialTexts(std::move(texts));
}

std::shared_ptr<const constrain::TokenTrie> GrammarCache::trie() {
  std::call_once(trie_once_, [this] {
    std::vector<std::optional<std::string>> bytes;
    bytes.reserve(static_cast<size_t>(tokenizer_.vocab_size()));
    // Special tokens as their marked text; ordinary tokens holding the mark byte never (it is
    // not UTF-8, and a grammar's 0xFF always starts or ends a special: special_marks.h).
    for (int32_t id = 0; id < tokenizer_.vocab_size(); ++id) {
      if (tokenizer_.is_special(id)) {
        bytes.push_back(constrain::mark_special(tokenizer_.decode(std::span<const int32_t>(&id, 1), false)));
        continue;
      }
      std::optional<std::string> b = tokenizer_.token_bytes(id);
      if (b && b->find(constrain::kSpecialMark) != std::string::npos) b.reset();
      bytes.push_back(std::move(b));
    }
    trie_ = std::make_shared<const constrain::TokenTrie>(bytes);
  });
  return trie_;
}

Result<std::shared_ptr<const constrain::GrammarMasks>> GrammarCache::json_schema(const nlohmann::ordered_json& schema) {
  return cached("schema:" + schema.dump(), [&] { return constrain::compile_json_schema(schema); });
}

Result<std::shared_ptr<const constrain::GrammarMasks>> GrammarCache::framed_json(const constrain::FramedJson& spec) {
  // The key: every part with its length before it (literals hold marked specials, not UTF-8).
  std::string key = "framed";
  const auto part = [&key](std::string_view p) { key += std::to_string(p.size()) + ":" + std::string(p); };
  part(spec.prefix), part(spec.separator), part(spec.suffix), part(spec.lead);
  part(spec.answer ? spec.answer->dump() : std::string());
  key += fmt::format("{},{},{}", spec.min_items, spec.max_items, spec.answer.has_value());
  for (const auto& frame : spec.frames) {
    key += "|";
    for (const auto& p : frame) {
      key += std::to_string(static_cast<int>(p.kind));
      part(p.text);
      part(p.schema.is_null() ? std::string() : p.schema.dump());
      key += std::to_string(p.length);
    }
  }
  return cached(key, [&] { return constrain::compile_framed_json(spec); });
}

Result<std::shared_ptr<const constrain::GrammarMasks>> GrammarCache::cached(
    const std::string& key, const std::function<Result<std::shared_ptr<const constrain::Grammar>>()>& compile) {
  {
    std::lock_guard lock(mu_);
    if (auto it = by_schema_.find(key); it != by_schema_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
  }
  OG_ASSIGN_OR_RETURN(std::shared_ptr<const constrain::Grammar> g, compile());
  if (g->matches_nothing()) return bad_input("json schema: no JSON value satisfies it");  // (or no frame)
  auto masks = std::make_shared<const constrain::GrammarMasks>(std::move(g), trie(), json_library_);
  std::lock_guard lock(mu_);
  if (auto it = by_schema_.find(key); it != by_schema_.end()) return it->second.first;  // compiled meanwhile
  lru_.push_front(key);
  by_schema_[key] = {masks, lru_.begin()};
  while (by_schema_.size() > capacity_) {
    by_schema_.erase(lru_.back());
    lru_.pop_back();
  }
  return std::shared_ptr<const constrain::GrammarMasks>(masks);
}

}  // namespace og::generate
