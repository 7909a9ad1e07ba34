#include "tokenizer/bpe.h"

#include <algorithm>
#include <bit>

#include "tokenizer/unicode.h"

namespace og::tokenizer {

Status BpeModel::init(BpeSpec& spec) {
  spec_ = &spec;
  const size_t n = spec.vocab_entries();
  if (spec.vocab_ends.size() != n) return bad_input("tokenizer: {} vocabulary ids but {} token ends", n, spec.vocab_ends.size());
  int32_t max_id = -1;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t begin = i == 0 ? 0 : spec.vocab_ends[i - 1], end = spec.vocab_ends[i];
    // Token boundaries must be character boundaries of the (valid UTF-8) vocabulary text.
    if (end < begin || end > spec.vocab_bytes.size() || (end < spec.vocab_bytes.size() && (static_cast<uint8_t>(spec.vocab_bytes[end]) & 0xC0) == 0x80))
      return bad_input("tokenizer: vocabulary entry {} has bad bounds [{}, {})", i, begin, end);
    if (spec.vocab_ids[i] < 0) return bad_input("tokenizer: vocabulary id {} of '{}' is negative", spec.vocab_ids[i], spec.token(i));
    max_id = std::max(max_id, spec.vocab_ids[i]);
  }
  if (n > 0 && spec.vocab_ends.back() != spec.vocab_bytes.size()) return bad_input("tokenizer: vocabulary text has trailing bytes");
  id_entry_.assign(static_cast<size_t>(max_id + 1), 0);
  for (size_t i = 0; i < n; ++i)
    if (id_entry_[spec.vocab_ids[i]] == 0) id_entry_[spec.vocab_ids[i]] = static_cast<uint32_t>(i + 1);
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const MergeRule& m = spec.merges[rank];
    if (!has_id(m.left) || !has_id(m.right) || !has_id(m.merged))
      return bad_input("tokenizer: merge {} ({}, {} -> {}) uses an id that is not in the vocabulary", rank, m.left, m.right, m.merged);
  }
  if (spec.vocab_table.empty()) {
    VocabTable::prepare(spec.vocab_table, n);
    for (size_t i = 0; i < n; ++i)
      if (!VocabTable::insert(spec.vocab_table, spec, static_cast<uint32_t>(i)))
        return bad_input("tokenizer: token '{}' appears twice in the vocabulary", spec.token(i));
  }
  if (spec.merge_table.empty()) {
    MergeTable::prepare(spec.merge_table, spec.merges.size());
    for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
      const MergeRule& m = spec.merges[rank];
      MergeTable::insert(spec.merge_table, merge_key(m.left, m.right), static_cast<uint32_t>(rank), m.merged);
    }
  }
  OG_TRY(check_tables());
  vocab_.view(spec.vocab_table, &spec);
  merges_.view(spec.merge_table);
  plain_chars_ = spec.continuing_subword_prefix.empty() && spec.end_of_word_suffix.empty();
  if (plain_chars_) {
    bmp_char_ids_.assign(0x10000, -1);
    for (size_t e = 0; e < n; ++e) {
      const std::string_view token = spec.token(e);
      if (token.empty() || token.size() > 3) continue;
      size_t i = 0;
      const char32_t c = next_char(token, i);
      if (i == token.size() && c < 0x10000) bmp_char_ids_[c] = spec.vocab_ids[e];
    }
  }
  for (int b = 0; b < 256; ++b) byte_ids_[b] = vocab_.find(fmt::format("<0x{:02X}>", b));
  return Status::ok();
}

// Tables that came with a blob must at least keep lookups in bounds and terminating.
Status BpeModel::check_tables() const {
  const BpeSpec& s = *spec_;
  const auto bad_size = [](size_t size, size_t entries) { return size < 16 || !std::has_single_bit(size) || entries * 4 > size * 3; };
  if (bad_size(s.vocab_table.size(), s.vocab_entries())) return bad_input("tokenizer: vocabulary table of {} slots", s.vocab_table.size());
  if (bad_size(s.merge_table.size(), s.merges.size())) return bad_input("tokenizer: merge table of {} slots", s.merge_table.size());
  size_t used = 0;
  for (const VocabSlot& slot : s.vocab_table) {
    if (slot.entry == 0) continue;
    if (slot.entry > s.vocab_entries()) return bad_input("tokenizer: vocabulary table points at entry {}", slot.entry);
    ++used;
  }
  if (used != s.vocab_entries()) return bad_input("tokenizer: vocabulary table holds {} of {} tokens", used, s.vocab_entries());
  used = 0;
  for (const MergeSlot& slot : s.merge_table) {
    if (slot.key == MergeSlot{}.key) continue;
    if (slot.rank >= s.merges.size() || !has_id(slot.merged)) return bad_input("tokenizer: merge table slot has rank {} / id {}", slot.rank, slot.merged);
    ++used;
  }
  if (used > s.merges.size()) return bad_input("tokenizer: merge table holds {} merges, the model has {}", used, s.merges.size());
  return Status::ok();
}

int32_t BpeModel::char_id(std::string_view word, size_t begin, size_t end, std::string& scratch) const {
  if (plain_chars_) {
    if (end - begin <= 3) {
      size_t i = begin;
      return bmp_char_ids_[next_char(word, i)];
    }
    return vocab_.find(word.substr(begin, end - begin));
  }
  scratch.clear();
  if (begin != 0 && spec_->has_continuing_subword_prefix) scratch += spec_->continuing_subword_prefix;
  scratch.append(word.substr(begin, end - begin));
  if (end == word.size() && spec_->has_end_of_word_suffix) scratch += spec_->end_of_word_suffix;
  return vocab_.find(scratch);
}

Status BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return Status::ok();
  if (spec_->ignore_merges) {
    if (const int32_t id = vocab_.find(word); id >= 0) {
      out.push_back(id);
      return Status::ok();
    }
  }
  thread_local std::vector<int32_t> ids;   // [symbols]
  thread_local std::vector<uint32_t> lens;  // [symbols] byte length of each symbol
  thread_local std::string scratch;
  ids.clear();
  lens.clear();
  int32_t unk_id = -1;
  uint32_t unk_len = 0;
  for (size_t i = 0; i < word.size();) {
    const size_t begin = i;
    next_char(word, i);
    const auto byte_len = static_cast<uint32_t>(i - begin);
    if (const int32_t id = char_id(word, begin, i, scratch); id >= 0) {
      if (unk_id >= 0) ids.push_back(unk_id), lens.push_back(unk_len), unk_id = -1;
      ids.push_back(id), lens.push_back(byte_len);
      continue;
    }
    if (spec_->byte_fallback) {
      const std::string_view s = plain_chars_ ? word.substr(begin, byte_len) : std::string_view(scratch);
      const bool all_bytes = std::all_of(s.begin(), s.end(), [&](char b) { return byte_ids_[static_cast<uint8_t>(b)] >= 0; });
      if (all_bytes) {
        // merge_word adds byte tokens without flushing a pending unk first; so do we.
        for (char b : s) ids.push_back(byte_ids_[static_cast<uint8_t>(b)]), lens.push_back(1);
        continue;
      }
    }
    if (spec_->has_unk) {
      const int32_t uid = vocab_.find(spec_->unk_token);
      if (uid < 0) return bad_input("tokenizer: model.unk_token '{}' is not in the vocabulary", spec_->unk_token);
      if (unk_id >= 0 && spec_->fuse_unk) {
        unk_len += byte_len;
      } else {
        if (unk_id >= 0) ids.push_back(unk_id), lens.push_back(unk_len);
        unk_id = uid, unk_len = byte_len;
      }
    }
  }
  if (unk_id >= 0) ids.push_back(unk_id), lens.push_back(unk_len);
  merge_all(ids, lens);
  for (size_t k = 0; k < ids.size(); ++k)
    if (lens[k] != 0) out.push_back(ids[k]);
  return Status::ok();
}

// word.rs merge_all without dropout. Symbols stay in place; a merged-away symbol gets
// length 0 and the list links skip it.
void BpeModel::merge_all(std::vector<int32_t>& ids, std::vector<uint32_t>& lens) const {
  const size_t n = ids.size();
  if (n < 2) return;
  thread_local std::vector<int32_t> prev, next;  // [symbols] links, -1 at the ends
  struct Candidate {
    uint32_t rank;
    uint32_t pos;
    int32_t merged;
  };
  // Min-heap on (rank, pos): std heaps are max-heaps, so the comparison is reversed.
  const auto later = [](const Candidate& a, const Candidate& b) { return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos; };
  thread_local std::vector<Candidate> heap;
  prev.resize(n);
  next.resize(n);
  heap.clear();
  for (size_t k = 0; k < n; ++k) {
    prev[k] = static_cast<int32_t>(k) - 1;
    next[k] = k + 1 < n ? static_cast<int32_t>(k + 1) : -1;
    if (k + 1 < n)
      if (const MergeSlot* m = merges_.find(merge_key(ids[k], ids[k + 1]))) heap.push_back({m->rank, static_cast<uint32_t>(k), m->merged});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  const auto push = [&](uint32_t pos, int32_t right_id) {
    if (const MergeSlot* m = merges_.find(merge_key(ids[pos], right_id))) {
      heap.push_back({m->rank, pos, m->merged});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate top = heap.back();
    heap.pop_back();
    const uint32_t pos = top.pos;
    if (lens[pos] == 0 || next[pos] == -1) continue;
    const auto right = static_cast<uint32_t>(next[pos]);
    const MergeSlot* m = merges_.find(merge_key(ids[pos], ids[right]));
    if (m == nullptr || m->merged != top.merged) continue;
    ids[pos] = top.merged;
    lens[pos] += lens[right];
    next[pos] = next[right];
    lens[right] = 0;
    if (next[right] >= 0) prev[static_cast<size_t>(next[right])] = static_cast<int32_t>(pos);
    if (prev[pos] >= 0) push(static_cast<uint32_t>(prev[pos]), ids[pos]);
    if (next[pos] >= 0) push(pos, ids[static_cast<size_t>(next[pos])]);
  }
}

}  // namespace og::tokenizer
