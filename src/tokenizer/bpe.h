// The BPE model of tokenizers (models/bpe/model.rs + word.rs), reproduced step for step:
// characters (with continuing_subword_prefix / end_of_word_suffix) looked up in the
// vocabulary, byte fallback to <0xNN> tokens, unk fusing, ignore_merges, and merges applied
// lowest rank first (leftmost on ties) from a priority queue, with the same stale-entry
// rule (a queued merge is skipped unless the pair still maps to the same merged id).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tokenizer/flat_map.h"
#include "tokenizer/spec.h"

namespace og::tokenizer {

class BpeModel {
 public:
  BpeModel() = default;
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Indexes `spec`, which must outlive the model (the tables view it). Builds the spec's
  // lookup tables when it has none, else checks the ones it carries. Errors name ids out of
  // range and merges whose ids are not in the vocabulary.
  Status init(BpeSpec& spec);

  // Appends the ids of one pre-tokenized word (empty words produce nothing).
  Status encode_word(std::string_view word, std::vector<int32_t>& out) const;

  int32_t find(std::string_view token) const { return vocab_.find(token); }  // -1 if absent
  // The vocabulary string of `id`; nullptr data when the model has no such id.
  std::string_view token_of(int32_t id) const {
    return has_id(id) ? spec_->token(id_entry_[id] - 1) : std::string_view();
  }
  bool has_id(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < id_entry_.size() && id_entry_[id] != 0; }
  int32_t id_limit() const { return static_cast<int32_t>(id_entry_.size()); }

 private:
  Status check_tables() const;
  // Id of one character of the word, with prefix/suffix applied as merge_word does.
  int32_t char_id(std::string_view word, size_t begin, size_t end, std::string& scratch) const;
  void merge_all(std::vector<int32_t>& ids, std::vector<uint32_t>& lens) const;

  const BpeSpec* spec_ = nullptr;
  VocabTable vocab_;
  MergeTable merges_;
  std::vector<uint32_t> id_entry_;     // [max id + 1] 1 + vocabulary entry of each id, 0 if none
  std::vector<int32_t> bmp_char_ids_;  // [0x10000] single-character tokens, -1 if absent
  int32_t byte_ids_[256];              // <0xNN> tokens, -1 if absent
  bool plain_chars_ = true;            // no effective prefix/suffix: characters look up as-is
};

}  // namespace og::tokenizer
