// Which tokens may come next: the vocabulary as byte strings in a trie (built once per
// program), walked with a Matcher so that tokens sharing a prefix are tested once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "constrain/matcher.h"

namespace og::constrain {

class TokenTrie {
 public:
  // token_bytes[id]: the bytes token id adds to a text (Tokenizer::token_bytes); none, or an
  // empty string, for tokens a grammar never allows (special tokens: control, not text).
  explicit TokenTrie(std::span<const std::optional<std::string>> token_bytes);

  int32_t vocab_size() const { return vocab_size_; }
  // The bytes of token `id` ("" for a token never allowed).
  std::string_view bytes(int32_t id) const {
    const auto i = static_cast<size_t>(id);
    return std::string_view(blob_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  // Bytes of the longest token.
  size_t max_token_bytes() const { return max_len_; }

  struct Node {
    uint32_t first_child = 0, n_children = 0;  // into child_byte_/child_node_, sorted by byte
    uint32_t first_token = 0, n_tokens = 0;    // into tokens_: the ids whose bytes end here
  };
  const Node& node(uint32_t i) const { return nodes_[i]; }
  uint8_t child_byte(uint32_t k) const { return child_byte_[k]; }
  uint32_t child_node(uint32_t k) const { return child_node_[k]; }
  int32_t token(uint32_t k) const { return tokens_[k]; }

 private:
  int32_t vocab_size_ = 0;
  size_t max_len_ = 0;
  std::vector<Node> nodes_;  // [0] is the root (the empty prefix)
  std::vector<uint8_t> child_byte_;
  std::vector<uint32_t> child_node_;
  std::vector<int32_t> tokens_;
  std::string blob_;              // every token's bytes, in id order
  std::vector<uint32_t> offsets_; // [vocab + 1] into blob_
};

// One bit per token id, 64 to a word: [ceil(vocab / 64)].
using TokenMask = std::vector<uint64_t>;
inline bool mask_has(const TokenMask& m, int32_t id) { return (m[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1; }
inline void mask_set(TokenMask& m, int32_t id) { m[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63); }

// What every token does from a frame at one grammar state, whatever lies below it.
struct StateTokens {
  TokenMask accepted;  // read whole without leaving the state's rule (or ending it exactly)
  std::vector<std::pair<std::string, std::vector<int32_t>>> after_return;  // suffix -> tokens
};

// StateTokens of the states every grammar of a family starts with (the JSON rules every
// compiled schema begins with, json_grammar.h, are the same states with the same edges in
// each): computed once per vocabulary and shared by all those grammars.
class SharedStateTokens {
 public:
  explicit SharedStateTokens(int32_t below) : below_(below) {}
  int32_t below() const { return below_; }

 private:
  friend class GrammarMasks;
  const int32_t below_;  // states [0, below) are shared
  std::mutex mu_;
  std::unordered_map<int32_t, std::unique_ptr<const StateTokens>> states_;
};

// The allowed tokens of a grammar, fast: per state of a rule, what every token does from a
// frame at that state whatever lies below it is computed once (xgrammar's adaptive token
// mask cache): most tokens are accepted or refused by the state alone; the others finish the
// state's rule partway and leave a suffix that the frames below must read, checked per step
// once per distinct suffix. Thread-safe; shared by every request with the same grammar.
class GrammarMasks {
 public:
  GrammarMasks(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
               std::shared_ptr<SharedStateTokens> shared = nullptr);
  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  const TokenTrie& trie() const { return *trie_; }

  // Equal to allowed_tokens(matcher, trie()) (tested), at a fraction of its cost.
  TokenMask allowed(Matcher& matcher) const;

 private:
  const StateTokens& of_state(int32_t state) const;
  StateTokens compute(int32_t state) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::shared_ptr<SharedStateTokens> shared_;
  mutable std::mutex mu_;
  mutable std::unordered_map<int32_t, std::unique_ptr<const StateTokens>> states_;
};

// The tokens whose whole bytes the matcher can read next (exact: a token may end inside a
// UTF-8 character or span several of the grammar's pieces). End-of-sequence tokens are the
// caller's: they may come when matcher.accepting(). The matcher is left as it was.
TokenMask allowed_tokens(Matcher& matcher, const TokenTrie& trie);

}  // namespace og::constrain
