#include "constrain/token_mask.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace og::constrain {

TokenTrie::TokenTrie(std::span<const std::optional<std::string>> token_bytes)
    : vocab_size_(static_cast<int32_t>(token_bytes.size())) {
  offsets_.push_back(0);
  for (const auto& b : token_bytes) {
    if (b) blob_ += *b;
    offsets_.push_back(static_cast<uint32_t>(blob_.size()));
  }
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

GrammarMasks::GrammarMasks(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                           std::shared_ptr<SharedStateTokens> shared)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), shared_(std::move(shared)) {}

const StateTokens& GrammarMasks::of_state(int32_t state) const {
  const bool is_shared = shared_ && state < shared_->below_;
  std::mutex& mu = is_shared ? shared_->mu_ : mu_;
  auto& states = is_shared ? shared_->states_ : states_;
  {
    std::lock_guard lock(mu);
    if (auto it = states.find(state); it != states.end()) return *it->second;
  }
  auto computed = std::make_unique<const StateTokens>(compute(state));  // outside the lock: it is long
  std::lock_guard lock(mu);
  auto [it, inserted] = states.try_emplace(state, std::move(computed));
  return *it->second;
}

// One walk of the trie from a frame at `state` with unknown frames below (Matcher::inside).
// A token whose bytes all read is accepted. Where the rule returns after d >= 1 bytes, every
// token below that trie node that is longer than d depends on the frames below: it is listed
// under its remaining bytes. (A return before any byte needs no entry: the level the state
// came from also holds the frames below, and their own entries cover it.)
StateTokens GrammarMasks::compute(int32_t state) const {
  const TokenTrie& trie = *trie_;
  StateTokens out;
  out.accepted.assign((static_cast<size_t>(trie.vocab_size()) + 63) / 64, 0);
  std::unordered_map<std::string, std::vector<int32_t>> by_suffix;
  Matcher m = Matcher::inside(grammar_, state);
  struct Visit {
    uint32_t node, next_child;
  };
  std::vector<Visit> stack{{0, 0}};
  std::vector<uint32_t> below;  // scratch: a subtree's nodes
  while (!stack.empty()) {
    Visit& v = stack.back();
    const TokenTrie::Node& n = trie.node(v.node);
    if (v.next_child == n.n_children) {
      stack.pop_back();
      if (!stack.empty()) m.rollback(1);
      continue;
    }
    const uint32_t k = n.first_child + v.next_child++;
    const uint8_t b = trie.child_byte(k);
    if (!m.allows(b) || !m.advance(b)) continue;
    const uint32_t c = trie.child_node(k);
    const size_t depth = stack.size();  // bytes read to reach c
    const TokenTrie::Node& child = trie.node(c);
    for (uint32_t t = 0; t < child.n_tokens; ++t) mask_set(out.accepted, trie.token(child.first_token + t));
    if (m.popped()) {  // the tokens longer than this, under c, go on below the rule
      below.assign(1, c);
      while (!below.empty()) {
        const uint32_t x = below.back();
        below.pop_back();
        const TokenTrie::Node& xn = trie.node(x);
        for (uint32_t i = 0; i < xn.n_children; ++i) {
          const uint32_t y = trie.child_node(xn.first_child + i);
          below.push_back(y);
          const TokenTrie::Node& yn = trie.node(y);
          for (uint32_t t = 0; t < yn.n_tokens; ++t) {
            const int32_t id = trie.token(yn.first_token + t);
            by_suffix[std::string(trie.bytes(id).substr(depth))].push_back(id);
          }
        }
      }
    }
    stack.push_back({c, 0});
  }
  for (auto& [suffix, ids] : by_suffix) {
    std::erase_if(ids, [&](int32_t id) { return mask_has(out.accepted, id); });
    if (!ids.empty()) out.after_return.emplace_back(suffix, std::move(ids));
  }
  std::sort(out.after_return.begin(), out.after_return.end());
  return out;
}

TokenMask GrammarMasks::allowed(Matcher& m) const {
  TokenMask mask((static_cast<size_t>(trie_->vocab_size()) + 63) / 64, 0);
  const std::vector<int32_t> tops(m.tops().begin(), m.tops().end());  // reads_after_return moves the level
  for (int32_t f : tops) {
    const StateTokens& st = of_state(m.frame_state(f));
    for (size_t w = 0; w < mask.size(); ++w) mask[w] |= st.accepted[w];
    for (const auto& [suffix, ids] : st.after_return)
      if (m.reads_after_return(f, suffix))
        for (int32_t id : ids) mask_set(mask, id);
  }
  return mask;
}

}  // namespace og::constrain
