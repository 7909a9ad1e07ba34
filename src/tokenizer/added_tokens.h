// Added (and special) tokens found in text before the model runs, as tokenizers'
// AddedVocabulary does: leftmost-longest, non-overlapping matching (its Aho-Corasick in
// LeftmostLongest mode), then the single_word / lstrip / rstrip rules of find_matches.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/flat_map.h"
#include "tokenizer/spec.h"

namespace og::tokenizer {

// A byte trie over token patterns.
class AddedTokenTrie {
 public:
  void add(std::string_view pattern, int32_t value);
  bool empty() const { return n_patterns_ == 0; }
  // The leftmost-longest match starting at or after `from`; false when there is none.
  bool next_match(std::string_view text, size_t from, size_t& begin, size_t& end, int32_t& value) const;

 private:
  static uint64_t edge_key(int32_t node, uint8_t byte) { return (uint64_t(uint32_t(node)) << 8) | byte; }
  std::vector<int32_t> node_value_{-1};  // [nodes] pattern value ending here, -1 if none; node 0 = root
  U64Map<int32_t> edges_;
  std::array<bool, 256> first_byte_{};
  size_t n_patterns_ = 0;
};

// A piece of the input: either text still to tokenize, or one added token.
struct TextPiece {
  std::string_view text;
  int32_t added_id = -1;
  bool at_origin = false;  // starts at byte 0 of the original input (Metaspace "first")
};

// tokenizers' AddedVocabulary::find_matches over one piece of text. `tokens[value]` gives the
// flags of the token a trie value stands for. Appends the resulting pieces (empty ones are
// dropped, as tokenizers drops empty splits).
void split_on_added_tokens(const TextPiece& piece, const AddedTokenTrie& trie, const std::vector<AddedTokenSpec>& tokens,
                           std::vector<TextPiece>& out);

}  // namespace og::tokenizer
