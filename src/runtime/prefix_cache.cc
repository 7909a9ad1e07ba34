#include "runtime/prefix_cache.h"

#include <xxhash.h>

#include <algorithm>

namespace og::runtime {

PrefixCache::PrefixCache(const PrefixCacheOptions& options) : options_(options) {
  options_.block_tokens = std::max<int64_t>(1, options_.block_tokens);
}

std::vector<uint64_t> PrefixCache::chain_hashes(std::span<const int32_t> tokens) const {
  const auto B = static_cast<size_t>(options_.block_tokens);
  std::vector<uint64_t> chain;
  uint64_t h = 0x6f66666772617068ull;  // any fixed seed
  for (size_t k = 0; (k + 1) * B <= tokens.size(); ++k) {
    h = XXH3_64bits_withSeed(tokens.data() + k * B, B * sizeof(int32_t), h);
    chain.push_back(h);
  }
  return chain;
}

void PrefixCache::unindex(EntryList::iterator it) {
  auto drop = [&](std::vector<EntryList::iterator>& v) { v.erase(std::remove(v.begin(), v.end(), it), v.end()); };
  for (uint64_t h : it->chain) {
    auto found = index_.find(h);
    if (found == index_.end()) continue;
    drop(found->second);
    if (found->second.empty()) index_.erase(found);
  }
  if (it->chain.empty()) drop(short_);
  counters_.bytes -= it->state->bytes();
  --counters_.entries;
  entries_.erase(it);
}

void PrefixCache::insert(std::span<const int32_t> tokens, std::shared_ptr<const PrefixState> state) {
  if (!state || state->length <= 0 || static_cast<int64_t>(tokens.size()) < state->length) return;
  const uint64_t bytes = state->bytes();
  if (bytes > options_.budget_bytes) return;
  const auto L = static_cast<size_t>(state->length);
  Entry e{.tokens = std::vector<int32_t>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(L)),
          .chain = chain_hashes(tokens.first(L)),
          .state = std::move(state)};
  std::lock_guard lock(mu_);
  // The same tokens stored again: the new state replaces the old.
  const std::vector<EntryList::iterator>* same = &short_;
  if (!e.chain.empty()) {
    auto found = index_.find(e.chain.back());
    same = found == index_.end() ? nullptr : &found->second;
  }
  if (same != nullptr)
    for (auto it : *same)
      if (it->tokens == e.tokens) {
        unindex(it);
        break;
      }
  // A state that serves every shorter prefix (flat caches only) makes the entries it extends
  // redundant: drop those that are prefixes of its tokens and serve the same way.
  if (e.state->can_restore(0)) {
    std::vector<EntryList::iterator> subsumed;
    auto scan = [&](const std::vector<EntryList::iterator>& v) {
      for (auto it : v)
        if (it->tokens.size() <= e.tokens.size() && it->state->can_restore(0) &&
            std::equal(it->tokens.begin(), it->tokens.end(), e.tokens.begin()) &&
            std::find(subsumed.begin(), subsumed.end(), it) == subsumed.end())
          subsumed.push_back(it);
    };
    for (uint64_t h : e.chain)
      if (auto found = index_.find(h); found != index_.end()) scan(found->second);
    scan(short_);
    for (auto it : subsumed) unindex(it);
  }
  entries_.push_front(std::move(e));
  const auto it = entries_.begin();
  for (uint64_t h : it->chain) index_[h].push_back(it);
  if (it->chain.empty()) short_.push_back(it);
  counters_.bytes += bytes;
  ++counters_.entries;
  while (counters_.bytes > options_.budget_bytes && !entries_.empty()) {
    unindex(std::prev(entries_.end()));
    ++counters_.evictions;
  }
}

PrefixMatch PrefixCache::lookup(std::span<const int32_t> tokens) {
  const auto chain = chain_hashes(tokens);
  std::lock_guard lock(mu_);
  ++counters_.queries;
  counters_.query_tokens += tokens.size();
  const int64_t limit = static_cast<int64_t>(tokens.size()) - 1;  // the last token must run
  if (limit <= 0) return {};
  // The longest restorable length an entry offers this request.
  auto offer = [&](const Entry& e) -> int64_t {
    const auto shared = static_cast<int64_t>(
        std::mismatch(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end()).first - e.tokens.begin());
    const int64_t n = std::min(shared, limit);
    if (e.state->can_restore(n)) return n;                             // flat caches: any prefix
    return e.state->length <= n && e.state->can_restore(e.state->length) ? e.state->length : 0;
  };
  // Deepest shared block first: a usable entry there beats any found at a shallower block.
  EntryList::iterator best = entries_.end();
  int64_t best_len = 0;
  auto consider = [&](const std::vector<EntryList::iterator>& candidates) {
    for (auto it : candidates)
      if (const int64_t n = offer(*it); n > best_len) {
        best_len = n;
        best = it;
      }
  };
  for (size_t k = chain.size(); k-- > 0 && best_len == 0;)
    if (auto found = index_.find(chain[k]); found != index_.end()) consider(found->second);
  if (best_len == 0) consider(short_);
  if (best_len == 0) return {};
  entries_.splice(entries_.begin(), entries_, best);  // most recently used
  ++counters_.hits;
  counters_.hit_tokens += static_cast<uint64_t>(best_len);
  return {.state = best->state, .length = best_len};
}

PrefixCacheCounters PrefixCache::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

}  // namespace og::runtime
