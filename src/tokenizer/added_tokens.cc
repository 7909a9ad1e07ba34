#include "tokenizer/added_tokens.h"

#include "tokenizer/unicode.h"

namespace og::tokenizer {

void AddedTokenTrie::add(std::string_view pattern, int32_t value) {
  if (pattern.empty()) return;
  int32_t node = 0;
  for (char ch : pattern) {
    const auto b = static_cast<uint8_t>(ch);
    if (const int32_t* child = edges_.find(edge_key(node, b))) {
      node = *child;
    } else {
      const auto created = static_cast<int32_t>(node_value_.size());
      node_value_.push_back(-1);
      edges_.insert_or_assign(edge_key(node, b), created);
      node = created;
    }
  }
  node_value_[node] = value;
  first_byte_[static_cast<uint8_t>(pattern[0])] = true;
  ++n_patterns_;
}

bool AddedTokenTrie::next_match(std::string_view text, size_t from, size_t& begin, size_t& end, int32_t& value) const {
  if (n_patterns_ == 0) return false;
  for (size_t start = from; start < text.size(); ++start) {
    if (!first_byte_[static_cast<uint8_t>(text[start])]) continue;
    int32_t node = 0;
    int32_t best = -1;
    size_t best_end = 0;
    for (size_t i = start; i < text.size(); ++i) {
      const int32_t* child = edges_.find(edge_key(node, static_cast<uint8_t>(text[i])));
      if (child == nullptr) break;
      node = *child;
      if (node_value_[node] >= 0) best = node_value_[node], best_end = i + 1;
    }
    if (best >= 0) {
      begin = start, end = best_end, value = best;
      return true;
    }
  }
  return false;
}

namespace {

// The first / last character of a string, for the regex-crate checks of find_matches.
char32_t first_char(std::string_view s) {
  size_t i = 0;
  return next_char(s, i);
}
char32_t last_char(std::string_view s) {
  size_t start = s.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  return first_char(s.substr(start));
}
// Start of the whitespace run that ends `s` (regex `\s*$`).
size_t trailing_space_start(std::string_view s) {
  size_t at = s.size();
  while (at > 0) {
    size_t start = at - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (!is_white_space(first_char(s.substr(start, at - start)))) break;
    at = start;
  }
  return at;
}
// Length of the whitespace run that starts `s` (regex `^\s*`).
size_t leading_space_length(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t next = i;
    if (!is_white_space(next_char(s, next))) break;
    i = next;
  }
  return i;
}

}  // namespace

void split_on_added_tokens(const TextPiece& piece, const AddedTokenTrie& trie, const std::vector<AddedTokenSpec>& tokens,
                           std::vector<TextPiece>& out) {
  const std::string_view s = piece.text;
  const auto emit = [&](size_t begin, size_t end, int32_t id) {
    if (end > begin) out.push_back({s.substr(begin, end - begin), id, piece.at_origin && begin == 0});
  };
  size_t start_offset = 0;
  size_t search_from = 0;
  size_t begin = 0, end = 0;
  int32_t value = -1;
  // The search resumes after the raw match, not after rstrip's extension, as daachorse's
  // iterator does; a token skipped by single_word still consumes its match.
  while (trie.next_match(s, search_from, begin, end, value)) {
    search_from = end;
    const AddedTokenSpec& token = tokens[static_cast<size_t>(value)];
    size_t start = begin, stop = end;
    if (token.single_word) {
      const bool space_before = start == 0 || !is_regex_word_char(last_char(s.substr(0, start)));
      const bool space_after = stop == s.size() || !is_regex_word_char(first_char(s.substr(stop)));
      if (!space_before || !space_after) continue;
    }
    if (token.lstrip) start = std::max(trailing_space_start(s.substr(0, start)), start_offset);
    if (token.rstrip) stop += leading_space_length(s.substr(stop));
    if (start_offset < start) emit(start_offset, start, -1);
    if (stop > start) out.push_back({s.substr(start, stop - start), token.id, piece.at_origin && start == 0});
    start_offset = stop;
  }
  if (start_offset < s.size()) emit(start_offset, s.size(), -1);
}

}  // namespace og::tokenizer
