// Open-addressing hash tables for the encode hot path, with linear probing over a
// power-of-two table at most 3/4 full. MergeTable and VocabTable keep their slots in the
// TokenizerSpec (so the binary form carries them ready-made); U64Map is built at load.
// All are read-only once built, so safe to share between threads.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <xxhash.h>

#include "tokenizer/spec.h"

namespace og::tokenizer {

// Load factor between 3/8 and 3/4.
inline size_t table_size_for(size_t n) { return std::bit_ceil(std::max<size_t>(16, n + n / 3 + 1)); }

// murmur3's 64-bit finalizer: ids differ in few bits, linear probing needs all bits mixed.
inline uint64_t mix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}

inline uint64_t merge_key(int32_t left, int32_t right) { return (uint64_t(uint32_t(left)) << 32) | uint32_t(right); }

// (left, right) -> (rank, merged) over MergeSlot storage. Insert overwrites, as the Rust
// HashMap that tokenizers collects merges into does (a repeated pair keeps its last rank).
class MergeTable {
 public:
  // Builds `slots` (sized for n entries) for insert().
  static void prepare(std::vector<MergeSlot>& slots, size_t n) { slots.assign(table_size_for(n), MergeSlot{}); }
  static void insert(std::vector<MergeSlot>& slots, uint64_t key, uint32_t rank, int32_t merged) {
    const size_t mask = slots.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == key || slots[i].key == MergeSlot{}.key) {
        slots[i] = {key, rank, merged};
        return;
      }
    }
  }
  void view(std::span<const MergeSlot> slots) { slots_ = slots, mask_ = slots.size() - 1; }
  const MergeSlot* find(uint64_t key) const {
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      const MergeSlot& s = slots_[i];
      if (s.key == key) return &s;
      if (s.key == MergeSlot{}.key) return nullptr;
    }
  }

 private:
  std::span<const MergeSlot> slots_;
  size_t mask_ = 0;
};

// token bytes -> vocabulary entry over VocabSlot storage; the spec's packed vocabulary holds
// the keys. The first insert of a token wins.
class VocabTable {
 public:
  static uint64_t hash(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }
  static void prepare(std::vector<VocabSlot>& slots, size_t n) { slots.assign(table_size_for(n), VocabSlot{}); }
  // Returns false when the token is already present.
  static bool insert(std::vector<VocabSlot>& slots, const BpeSpec& spec, uint32_t entry) {
    const std::string_view key = spec.token(entry);
    const uint64_t h = hash(key);
    const size_t mask = slots.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      VocabSlot& s = slots[i];
      if (s.entry == 0) {
        s = {static_cast<uint32_t>(h >> 32), entry + 1};
        return true;
      }
      if (s.tag == static_cast<uint32_t>(h >> 32) && spec.token(s.entry - 1) == key) return false;
    }
  }
  void view(std::span<const VocabSlot> slots, const BpeSpec* spec) { slots_ = slots, mask_ = slots.size() - 1, spec_ = spec; }
  int32_t find(std::string_view key) const {  // the id, -1 when absent
    const uint64_t h = hash(key);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const VocabSlot& s = slots_[i];
      if (s.entry == 0) return -1;
      if (s.tag == tag && spec_->token(s.entry - 1) == key) return spec_->vocab_ids[s.entry - 1];
    }
  }

 private:
  std::span<const VocabSlot> slots_;
  size_t mask_ = 0;
  const BpeSpec* spec_ = nullptr;
};

// uint64 key -> V, built in memory (trie edges). The all-ones key marks empty slots.
template <typename V>
class U64Map {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  void insert_or_assign(uint64_t key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == kEmpty || s.key == key) {
        size_ += s.key == kEmpty;
        s = {key, value};
        return;
      }
    }
  }
  const V* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }

 private:
  struct Slot {
    uint64_t key = kEmpty;
    V value{};
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(table_size_for(std::max<size_t>(size_ + 1, old.size())), Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != kEmpty) insert_or_assign(s.key, s.value);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace og::tokenizer
