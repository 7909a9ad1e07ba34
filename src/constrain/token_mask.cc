#include "constrain/token_mask.h"

#include <algorithm>
#include <string_view>

namespace og::constrain {

TokenTrie::TokenTrie(std::span<const std::optional<std::string>> token_bytes)
    : vocab_size_(static_cast<int32_t>(token_bytes.size())) {
  std::vector<std::pair<std::string_view, int32_t>> sorted;
  for (size_t id = 0; id < token_bytes.size(); ++id)
    if (token_bytes[id] && !token_bytes[id]->empty()) sorted.emplace_back(*token_bytes[id], static_cast<int32_t>(id));
  std::sort(sorted.begin(), sorted.end());
  // First a trie with a list per node (tokens arrive sorted, so children arrive in byte order),
  // then flattened so each node's children are contiguous.
  struct Temp {
    std::vector<std::pair<uint8_t, uint32_t>> kids;
    std::vector<int32_t> toks;
  };
  std::vector<Temp> temp(1);
  std::vector<uint32_t> path{0};  // path[d]: the node of the previous token's first d bytes
  std::string_view prev;
  for (const auto& [bytes, id] : sorted) {
    max_len_ = std::max(max_len_, bytes.size());
    size_t common = 0;
    while (common < prev.size() && common < bytes.size() && prev[common] == bytes[common]) ++common;
    path.resize(common + 1);
    for (size_t d = common; d < bytes.size(); ++d) {
      temp.emplace_back();
      const auto child = static_cast<uint32_t>(temp.size() - 1);
      temp[path.back()].kids.emplace_back(static_cast<uint8_t>(bytes[d]), child);
      path.push_back(child);
    }
    temp[path.back()].toks.push_back(id);
    prev = bytes;
  }
  nodes_.resize(temp.size());
  for (size_t i = 0; i < temp.size(); ++i) {
    Node& n = nodes_[i];
    n.first_child = static_cast<uint32_t>(child_byte_.size());
    n.n_children = static_cast<uint32_t>(temp[i].kids.size());
    for (auto [b, c] : temp[i].kids) child_byte_.push_back(b), child_node_.push_back(c);
    n.first_token = static_cast<uint32_t>(tokens_.size());
    n.n_tokens = static_cast<uint32_t>(temp[i].toks.size());
    tokens_.insert(tokens_.end(), temp[i].toks.begin(), temp[i].toks.end());
    temp[i] = {};  // free as we go: the two forms need not coexist whole
  }
}

TokenMask allowed_tokens(Matcher& matcher, const TokenTrie& trie) {
  TokenMask mask((static_cast<size_t>(trie.vocab_size()) + 63) / 64, 0);
  const size_t mark = matcher.arena_mark();
  struct Visit {
    uint32_t node, next_child;
  };
  std::vector<Visit> stack{{0, 0}};
  stack.reserve(trie.max_token_bytes() + 1);
  while (!stack.empty()) {
    Visit& v = stack.back();
    const TokenTrie::Node& n = trie.node(v.node);
    if (v.next_child == n.n_children) {
      stack.pop_back();
      if (!stack.empty()) matcher.rollback(1);  // the byte that led to this node
      continue;
    }
    const uint32_t k = n.first_child + v.next_child++;
    const uint8_t b = trie.child_byte(k);
    if (!matcher.allows(b) || !matcher.advance(b)) continue;
    const uint32_t c = trie.child_node(k);
    const TokenTrie::Node& child = trie.node(c);
    for (uint32_t t = 0; t < child.n_tokens; ++t) mask_set(mask, trie.token(child.first_token + t));
    stack.push_back({c, 0});
  }
  matcher.truncate(mark);
  return mask;
}

}  // namespace og::constrain
