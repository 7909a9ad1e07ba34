#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <unordered_set>

#include "base/mapped_file.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/spec.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {

// Ids index dense tables; a blob claiming larger ids is rejected before allocating.
constexpr int32_t kIdLimit = 1 << 24;

struct Tokenizer::Impl {
  TokenizerSpec spec;  // everything below views into it; Impl never moves once built
  BpeModel model;
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  Decoder decoder;
  AddedTokenTrie raw_trie;         // added tokens with normalized = false, matched on raw text
  AddedTokenTrie normalized_trie;  // normalized = true, matched (normalized) on normalized text
  std::vector<int32_t> added_index;      // [id limit] index into spec.added_tokens, -1 if none
  std::vector<std::string> added_text;   // [added tokens] what decode shows for each
  std::unordered_set<std::string_view> special_contents;
  int32_t id_limit = 0;
};

Result<Tokenizer> Tokenizer::build(TokenizerSpec spec) {
  auto impl = std::make_shared<Impl>();
  impl->spec = std::move(spec);
  const TokenizerSpec& s = impl->spec;
  for (size_t i = 0; i < s.model.vocab_entries(); ++i)
    if (s.model.vocab_ids[i] < 0 || s.model.vocab_ids[i] >= kIdLimit)
      return bad_input("tokenizer: vocabulary id {} of '{}' is outside [0, {})", s.model.vocab_ids[i], s.model.token(i), kIdLimit);
  // Characters from a blob become UTF-8 that PCRE2 later reads unchecked: they must be valid.
  const auto scalar = [](char32_t c) { return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); };
  for (const PreTokenizerStep& p : s.pre_tokenizers)
    if (!scalar(p.replacement)) return bad_input("tokenizer: pre-tokenizer replacement U+{:X} is not a character", uint32_t(p.replacement));
  for (const DecoderStep& d : s.decoders)
    if (!scalar(d.replacement) || !scalar(d.strip_char)) return bad_input("tokenizer: decoder character is not a Unicode scalar value");
  OG_TRY(impl->model.init(impl->spec.model));
  OG_TRY(impl->normalizer.init(s.normalizers));
  OG_TRY(impl->pre_tokenizer.init(s.pre_tokenizers));
  OG_TRY(impl->decoder.init(s.decoders, s.has_decoder));
  impl->id_limit = impl->model.id_limit();
  for (const AddedTokenSpec& a : s.added_tokens) {
    if (a.id < 0 || a.id >= kIdLimit) return bad_input("tokenizer: added token '{}' has id {} outside [0, {})", a.content, a.id, kIdLimit);
    if (a.content.empty()) return bad_input("tokenizer: added token {} has empty content", a.id);
    impl->id_limit = std::max(impl->id_limit, a.id + 1);
  }
  for (const TemplateStep& t : s.templates)
    for (const TemplatePiece& p : t.single)
      for (int32_t id : p.ids)
        if (id < 0) return bad_input("tokenizer: post-processor template id {} is negative", id);
  impl->added_index.assign(static_cast<size_t>(impl->id_limit), -1);
  for (size_t k = 0; k < s.added_tokens.size(); ++k) {
    const AddedTokenSpec& a = s.added_tokens[k];
    impl->added_index[a.id] = static_cast<int32_t>(k);
    std::string text = a.content;
    // A normalized token is matched, and decoded, in its normalized form.
    if (a.normalized) OG_TRY(impl->normalizer.apply(text));
    (a.normalized ? impl->normalized_trie : impl->raw_trie).add(text, static_cast<int32_t>(k));
    impl->added_text.push_back(std::move(text));
    if (a.special) impl->special_contents.insert(a.content);
  }
  return Tokenizer(std::move(impl));
}

Result<Tokenizer> Tokenizer::from_json(std::string_view json_text, const std::string& source) {
  OG_ASSIGN_OR_RETURN(TokenizerSpec spec, spec_from_json(json_text, source));
  auto t = build(std::move(spec));
  if (!t.is_ok()) return t.status().with_context(source);
  return t;
}

Result<Tokenizer> Tokenizer::from_json_file(const std::string& path) {
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec) ? (std::filesystem::path(path) / "tokenizer.json").string() : path;
  if (!std::filesystem::exists(file, ec)) return bad_input("{}: no such file", file);
  OG_ASSIGN_OR_RETURN(std::string text, read_text_file(file));
  return from_json(text, file);
}

Result<Tokenizer> Tokenizer::deserialize(std::span<const uint8_t> blob) {
  OG_ASSIGN_OR_RETURN(TokenizerSpec spec, spec_from_binary(blob));
  auto t = build(std::move(spec));
  if (!t.is_ok()) return t.status().with_context("tokenizer blob");
  return t;
}

std::vector<uint8_t> Tokenizer::serialize() const { return spec_to_binary(impl_->spec); }
const TokenizerSpec& Tokenizer::spec() const { return impl_->spec; }

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_special) const {
  if (const size_t bad = find_invalid_utf8(text); bad != kValidUtf8)
    return bad_input("text is not valid UTF-8 (byte {} of {})", bad, text.size());
  const Impl& m = *impl_;
  std::vector<int32_t> ids;
  std::vector<TextPiece> raw, sub;
  std::vector<Word> words;
  std::string normalized;
  split_on_added_tokens({text, -1, true}, m.raw_trie, m.spec.added_tokens, raw);
  for (const TextPiece& piece : raw) {
    if (piece.added_id >= 0) {
      ids.push_back(piece.added_id);
      continue;
    }
    normalized.assign(piece.text);
    OG_TRY(m.normalizer.apply(normalized));
    sub.clear();
    split_on_added_tokens({normalized, -1, piece.at_origin}, m.normalized_trie, m.spec.added_tokens, sub);
    for (const TextPiece& part : sub) {
      if (part.added_id >= 0) {
        ids.push_back(part.added_id);
        continue;
      }
      OG_TRY(m.pre_tokenizer.apply(part.text, part.at_origin, words));
      for (const Word& w : words) OG_TRY(m.model.encode_word(w.text, ids));
    }
  }
  for (const TemplateStep& t : m.spec.templates) {
    std::vector<int32_t> with;
    for (const TemplatePiece& p : t.single) {
      if (p.is_sequence) with.insert(with.end(), ids.begin(), ids.end());
      else if (add_special) with.insert(with.end(), p.ids.begin(), p.ids.end());
    }
    ids = std::move(with);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  const Impl& m = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= m.id_limit) continue;
    std::string_view token;
    if (const int32_t k = m.added_index[id]; k >= 0) token = m.added_text[k];
    else if (m.model.has_id(id)) token = m.model.token_of(id);
    else continue;
    if (skip_special && m.special_contents.count(token)) continue;
    tokens.emplace_back(token);
  }
  return m.decoder.decode(std::move(tokens));
}

int32_t Tokenizer::vocab_size() const { return impl_->id_limit; }

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  const Impl& m = *impl_;
  if (id < 0 || id >= m.id_limit) return std::nullopt;
  if (const int32_t k = m.added_index[id]; k >= 0) return m.added_text[k];
  if (m.model.has_id(id)) return std::string(m.model.token_of(id));
  return std::nullopt;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  for (const AddedTokenSpec& a : impl_->spec.added_tokens)
    if (a.content == token) return a.id;
  if (const int32_t id = impl_->model.find(token); id >= 0) return id;
  return std::nullopt;
}

std::optional<std::string> Tokenizer::token_bytes(int32_t id) const {
  const Impl& m = *impl_;
  if (id < 0 || id >= m.id_limit || is_special(id)) return std::nullopt;
  if (const int32_t k = m.added_index[id]; k >= 0) return m.decoder.token_bytes(m.added_text[k]);
  if (!m.model.has_id(id)) return std::nullopt;
  return m.decoder.token_bytes(std::string(m.model.token_of(id)));
}

bool Tokenizer::is_special(int32_t id) const {
  const Impl& m = *impl_;
  if (id < 0 || id >= m.id_limit || m.added_index[id] < 0) return false;
  return m.spec.added_tokens[m.added_index[id]].special;
}

// tokenizers' step_decode_stream.
Result<std::string> StreamDecoder::step(int32_t id) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  const auto ends_incomplete = [](const std::string& s) { return s.ends_with(kReplacement); };
  if (prefix_.empty() && !ids_.empty()) {
    std::string p = tokenizer_.decode(ids_, skip_special_);
    if (!ends_incomplete(p)) prefix_ = std::move(p), prefix_index_ = ids_.size();
  }
  ids_.push_back(id);
  const std::string text = tokenizer_.decode(ids_, skip_special_);
  if (text.size() <= prefix_.size() || ends_incomplete(text)) return std::string();
  if (text.compare(0, prefix_.size(), prefix_) != 0)
    return Status(ErrorCode::kInternal, fmt::format("stream decode: token {} changed earlier text '{}' to '{}'", id, prefix_, text));
  std::string fresh = text.substr(prefix_.size());
  const size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(prefix_index_));
  prefix_ = tokenizer_.decode(ids_, skip_special_);
  prefix_index_ = new_prefix_index;
  return fresh;
}

}  // namespace og::tokenizer
