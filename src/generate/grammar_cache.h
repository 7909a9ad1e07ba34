// Grammars for one vocabulary, compiled once: the token trie is built on first use (once per
// program: tens of milliseconds to a few hundred at a 262k vocabulary), and each JSON schema
// is compiled once and kept, with the token classes its states have computed, for the next
// request that sends the same schema (the key is its text in its own key order, which is the
// order its objects are written in). Thread-safe.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "constrain/token_mask.h"
#include "tokenizer/tokenizer.h"

namespace og::generate {

class GrammarCache {
 public:
  explicit GrammarCache(tokenizer::Tokenizer tokenizer, size_t capacity = 64);

  // The masks of the JSON texts `schema` accepts. kBadInput names the keyword at fault
  // (constrain/json_schema.h), or says that no value satisfies the schema.
  Result<std::shared_ptr<const constrain::GrammarMasks>> json_schema(const nlohmann::ordered_json& schema);

 private:
  std::shared_ptr<const constrain::TokenTrie> trie();

  tokenizer::Tokenizer tokenizer_;
  size_t capacity_;
  std::once_flag trie_once_;
  std::shared_ptr<const constrain::TokenTrie> trie_;
  std::shared_ptr<constrain::SharedStateTokens> json_library_;  // the JSON rules' states, for every schema
  std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const constrain::GrammarMasks>, std::list<std::string>::iterator>> by_schema_;
};

}  // namespace og::generate
