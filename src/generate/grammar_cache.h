// Grammars for one vocabulary, compiled once: the token trie is built on first use (once per
// program: tens of milliseconds to a few hundred at a 262k vocabulary), and each JSON schema
// is compiled once and kept, with the token classes its states have computed, for the next
// request that sends the same schema (the key is its text in its own key order, which is the
// order its objects are written in). Thread-safe.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "constrain/special_marks.h"
#include "constrain/token_mask.h"
#include "tokenizer/tokenizer.h"

namespace og::generate {

class GrammarCache {
 public:
  explicit GrammarCache(tokenizer::Tokenizer tokenizer, size_t capacity = 64);

  // The masks of the JSON texts `schema` accepts. kBadInput names the keyword at fault
  // (constrain/json_schema.h), or says that no value satisfies the schema.
  Result<std::shared_ptr<const constrain::GrammarMasks>> json_schema(const nlohmann::ordered_json& schema);
  // The masks of literal frames around JSON values (a template's tool calls; its literals
  // with special tokens marked, constrain/special_marks.h), cached by the spec as well.
  Result<std::shared_ptr<const constrain::GrammarMasks>> framed_json(const constrain::FramedJson& spec);
  // The vocabulary's special tokens' texts (for marking literals).
  const constrain::SpecialTexts& specials() const { return specials_; }

 private:
  std::shared_ptr<const constrain::TokenTrie> trie();
  Result<std::shared_ptr<const constrain::GrammarMasks>> cached(const std::string& key,
                                                                 const std::function<Result<std::shared_ptr<const constrain::Grammar>>()>& compile);

  tokenizer::Tokenizer tokenizer_;
  size_t capacity_;
  constrain::SpecialTexts specials_;
  std::once_flag trie_once_;
  std::shared_ptr<const constrain::TokenTrie> trie_;
  std::shared_ptr<constrain::SharedStateTokens> json_library_;  // the JSON rules' states, for every schema
  std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const constrain::GrammarMasks>, std::list<std::string>::iterator>> by_schema_;
};

}  // namespace og::generate
