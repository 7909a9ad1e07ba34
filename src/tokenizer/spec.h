// TokenizerSpec: everything a tokenizer.json says that affects ids or text, resolved so a
// Tokenizer can be rebuilt without JSON: added-token ids assigned the way tokenizers
// assigns them, merges turned into (left, right, merged) id triples in rank order, nested
// Sequence components flattened. The binary blob (binary_format.cc) is exactly this struct.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tokenizer/pattern.h"

namespace og::tokenizer {

// A Split / Replace pattern as tokenizer.json writes it: {"String": s} or {"Regex": r}.
struct PatternSpec {
  std::string text;
  bool is_regex = false;
};

enum class PrependScheme : uint8_t { kAlways, kFirst, kNever };

struct NormalizerStep {
  enum class Kind : uint8_t { kReplace, kPrepend, kNfc, kNfd, kNfkc, kNfkd, kLowercase, kStrip, kStripAccents, kByteLevel };
  Kind kind = Kind::kNfc;
  PatternSpec pattern;   // kReplace
  std::string content;   // kReplace: replacement; kPrepend: the prefix
  bool strip_left = false, strip_right = false;  // kStrip
};

struct PreTokenizerStep {
  enum class Kind : uint8_t { kSplit, kByteLevel, kMetaspace, kDigits, kWhitespace, kWhitespaceSplit };
  Kind kind = Kind::kSplit;
  PatternSpec pattern;  // kSplit
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false, use_regex = true;  // kByteLevel
  char32_t replacement = 0x2581;                    // kMetaspace
  PrependScheme prepend_scheme = PrependScheme::kAlways;
  bool split = true;
  bool individual_digits = false;  // kDigits
};

struct DecoderStep {
  enum class Kind : uint8_t { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace };
  Kind kind = Kind::kFuse;
  PatternSpec pattern;   // kReplace
  std::string content;   // kReplace
  char32_t strip_char = ' ';  // kStrip
  uint32_t strip_start = 0, strip_stop = 0;
  char32_t replacement = 0x2581;  // kMetaspace
  PrependScheme prepend_scheme = PrependScheme::kAlways;
};

// One piece of TemplateProcessing's `single` template: the input sequence, or the ids of
// a special token (added only when add_special is true).
struct TemplatePiece {
  bool is_sequence = false;
  std::vector<int32_t> ids;
};
struct TemplateStep {
  std::vector<TemplatePiece> single;
};

struct AddedTokenSpec {
  int32_t id = 0;
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

struct MergeRule {
  int32_t left = 0, right = 0, merged = 0;  // the rank is the index in BpeSpec::merges
};

// Lookup tables derived from vocab and merges (open addressing, see flat_map.h). They are
// stored in the binary form so that loading copies them instead of rebuilding them, which
// is what makes a load take milliseconds; spec_from_json leaves them empty and the
// Tokenizer builds them.
struct MergeSlot {
  uint64_t key = ~uint64_t{0};  // (left << 32) | right; all ones = empty
  uint32_t rank = 0;
  int32_t merged = -1;
};
struct VocabSlot {
  uint32_t tag = 0;    // high 32 bits of the token's XXH3-64
  uint32_t entry = 0;  // 1 + index into the vocabulary; 0 = empty
};

// The binary form copies these arrays byte for byte.
static_assert(sizeof(MergeRule) == 12 && sizeof(MergeSlot) == 16 && sizeof(VocabSlot) == 8);

// The vocabulary packed as one byte string: entry i is
// vocab_bytes[vocab_ends[i-1] .. vocab_ends[i]) with id vocab_ids[i], sorted by (id, token).
struct BpeSpec {
  std::string vocab_bytes;
  std::vector<uint32_t> vocab_ends;
  std::vector<int32_t> vocab_ids;
  std::vector<MergeRule> merges;
  bool has_unk = false;
  std::string unk_token;
  bool has_continuing_subword_prefix = false, has_end_of_word_suffix = false;
  std::string continuing_subword_prefix, end_of_word_suffix;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  std::vector<MergeSlot> merge_table;
  std::vector<VocabSlot> vocab_table;

  size_t vocab_entries() const { return vocab_ids.size(); }
  std::string_view token(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : vocab_ends[i - 1];
    return std::string_view(vocab_bytes).substr(begin, vocab_ends[i] - begin);
  }
};

struct TokenizerSpec {
  std::vector<NormalizerStep> normalizers;      // applied in order; empty = none
  std::vector<PreTokenizerStep> pre_tokenizers;
  BpeSpec model;
  std::vector<AddedTokenSpec> added_tokens;     // in tokenizer.json order
  std::vector<TemplateStep> templates;          // post-processors that add ids
  bool has_decoder = false;                     // without one, tokens join with " "
  std::vector<DecoderStep> decoders;
};

// tokenizer.json text -> spec. `source` names the file in messages; unsupported
// components are kUnsupported errors naming the JSON path and type.
Result<TokenizerSpec> spec_from_json(std::string_view json_text, const std::string& source);

// The versioned binary form (header, checksum, payload) and its bounds-checked reader.
std::vector<uint8_t> spec_to_binary(const TokenizerSpec& spec);
Result<TokenizerSpec> spec_from_binary(std::span<const uint8_t> blob);

}  // namespace og::tokenizer
