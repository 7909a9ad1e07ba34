// A store of cache states keyed by token prefix (DESIGN.md §4b), so a request that resends a
// known prefix (a chat's history, a shared system prompt) restores it instead of computing it.
//
// Keys are hash chains over fixed-size token blocks, as vLLM and SGLang do: the hash after
// block k covers tokens [0, (k+1) * block). A stored state of L tokens is indexed under the
// chain hash of each of its whole blocks, so a lookup walks the request's chain from its
// deepest block down and meets only the states that share those blocks; candidates are then
// compared token by token (a hash collision can cost a look, never a wrong answer).
//
// What a state can serve (PrefixState::can_restore): a program whose caches are all flat
// serves any shorter prefix of a stored state; a ring's snapshot holds only the window
// before its own length, so a state with rings serves exactly its length. A lookup returns
// the longest restorable prefix, never the whole request (its last token must run to give
// logits). The store keeps states within a byte budget, evicting the least recently used.
//
// Thread-safe: the scheduler inserts and looks up; metrics readers take the counters.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "runtime/cache/cache_set.h"

namespace og::runtime {

struct PrefixCacheOptions {
  int64_t block_tokens = 16;
  uint64_t budget_bytes = 512ull << 20;
};

struct PrefixMatch {
  std::shared_ptr<const PrefixState> state;  // null: no hit
  int64_t length = 0;                        // tokens to restore from it
};

struct PrefixCacheCounters {
  uint64_t queries = 0;
  uint64_t hits = 0;
  uint64_t hit_tokens = 0;
  uint64_t query_tokens = 0;
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t evictions = 0;
};

class PrefixCache {
 public:
  explicit PrefixCache(const PrefixCacheOptions& options = {});

  // Stores the state of tokens [0, state.length) (tokens.size() >= state.length). A state
  // larger than the whole budget is not stored; the same tokens stored again replace it.
  void insert(std::span<const int32_t> tokens, std::shared_ptr<const PrefixState> state);
  // The longest restorable prefix of `tokens`, shorter than tokens.size().
  PrefixMatch lookup(std::span<const int32_t> tokens);

  PrefixCacheCounters counters() const;
  const PrefixCacheOptions& options() const { return options_; }

 private:
  struct Entry {
    std::vector<int32_t> tokens;               // [state->length]
    std::vector<uint64_t> chain;               // chain hash after each whole block
    std::shared_ptr<const PrefixState> state;
  };
  using EntryList = std::list<Entry>;          // most recently used first

  std::vector<uint64_t> chain_hashes(std::span<const int32_t> tokens) const;
  void unindex(EntryList::iterator it);

  PrefixCacheOptions options_;
  mutable std::mutex mu_;
  EntryList entries_;
  // chain hash after block k -> entries holding that block (k is implied by the hash)
  std::unordered_map<uint64_t, std::vector<EntryList::iterator>> index_;
  std::vector<EntryList::iterator> short_;     // entries shorter than one block
  PrefixCacheCounters counters_;
};

}  // namespace og::runtime
