#include "generate/grammar_cache.h"

#include "constrain/json_schema.h"

namespace og::generate {

GrammarCache::GrammarCache(tokenizer::Tokenizer tokenizer, size_t capacity)
    : tokenizer_(std::move(tokenizer)),
      capacity_(capacity),
      json_library_(std::make_shared<constrain::SharedStateTokens>(constrain::json_library_states())) {}

std::shared_ptr<const constrain::TokenTrie> GrammarCache::trie() {
  std::call_once(trie_once_, [this] {
    std::vector<std::optional<std::string>> bytes;
    bytes.reserve(static_cast<size_t>(tokenizer_.vocab_size()));
    for (int32_t id = 0; id < tokenizer_.vocab_size(); ++id) bytes.push_back(tokenizer_.token_bytes(id));
    trie_ = std::make_shared<const constrain::TokenTrie>(bytes);
  });
  return trie_;
}

Result<std::shared_ptr<const constrain::GrammarMasks>> GrammarCache::json_schema(const nlohmann::ordered_json& schema) {
  const std::string key = schema.dump();
  {
    std::lock_guard lock(mu_);
    if (auto it = by_schema_.find(key); it != by_schema_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
  }
  OG_ASSIGN_OR_RETURN(std::shared_ptr<const constrain::Grammar> g, constrain::compile_json_schema(schema));
  if (g->matches_nothing()) return bad_input("json schema: no JSON value satisfies it");
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
