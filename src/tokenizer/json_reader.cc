// tokenizer.json -> TokenizerSpec, following tokenizers' own deserializers (serialization.rs
// of the tokenizer, the BPE model and each component) where they decide ids: added tokens
// take the id the vocabulary already gives their content, else the next id after the
// model's vocabulary; merges resolve to ids and later duplicates win.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "tokenizer/json_fields.h"
#include "tokenizer/spec.h"

namespace og::tokenizer {
namespace {

// Token ids index dense tables at run time; 16M covers every released vocabulary.
constexpr int64_t kMaxTokenId = (int64_t{1} << 24) - 1;

Status read_model(const JsonReader& r, const Json& j, const std::string& path, BpeSpec& out,
                  std::unordered_map<std::string, int32_t>& vocab) {
  OG_ASSIGN_OR_RETURN(std::string type, r.string_or(j, "type", path, "BPE"));
  if (type != "BPE") return r.unsupported_type(path, type, "BPE");
  if (r.has(j, "dropout")) {
    OG_ASSIGN_OR_RETURN(double dropout, r.number(j, "dropout", path));
    if (dropout != 0.0) return unsupported("{}: {}.dropout = {}: BPE dropout is random at encode time and not supported", r.source, path, dropout);
  }
  out.has_unk = r.has(j, "unk_token");
  if (out.has_unk) { OG_ASSIGN_OR_RETURN(out.unk_token, r.string(j, "unk_token", path)); }
  out.has_continuing_subword_prefix = r.has(j, "continuing_subword_prefix");
  if (out.has_continuing_subword_prefix) { OG_ASSIGN_OR_RETURN(out.continuing_subword_prefix, r.string(j, "continuing_subword_prefix", path)); }
  out.has_end_of_word_suffix = r.has(j, "end_of_word_suffix");
  if (out.has_end_of_word_suffix) { OG_ASSIGN_OR_RETURN(out.end_of_word_suffix, r.string(j, "end_of_word_suffix", path)); }
  OG_ASSIGN_OR_RETURN(out.fuse_unk, r.boolean(j, "fuse_unk", path, false));
  OG_ASSIGN_OR_RETURN(out.byte_fallback, r.boolean(j, "byte_fallback", path, false));
  OG_ASSIGN_OR_RETURN(out.ignore_merges, r.boolean(j, "ignore_merges", path, false));

  if (!r.has(j, "vocab") || !j["vocab"].is_object()) return r.error(path + ".vocab", "missing or not an object");
  const Json& jv = j["vocab"];
  std::vector<std::pair<int32_t, std::string_view>> entries;  // (id, token)
  entries.reserve(jv.size());
  vocab.reserve(jv.size());
  for (const auto& [token, id] : jv.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxTokenId)
      return r.error(path + ".vocab", fmt::format("token '{}' has id {}; ids must be integers in [0, {}]", token, id.dump(), kMaxTokenId));
    auto [it, inserted] = vocab.emplace(token, static_cast<int32_t>(id.get<int64_t>()));
    entries.emplace_back(it->second, it->first);
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [id, token] : entries) {
    if (out.vocab_bytes.size() + token.size() > 0xFFFFFFFFu) return r.error(path + ".vocab", "more than 4 GiB of token text");
    out.vocab_bytes.append(token);
    out.vocab_ends.push_back(static_cast<uint32_t>(out.vocab_bytes.size()));
    out.vocab_ids.push_back(id);
  }

  if (!r.has(j, "merges") || !j["merges"].is_array()) return r.error(path + ".merges", "missing or not an array");
  const size_t prefix_len = out.continuing_subword_prefix.size();
  const auto lookup = [&](const std::string& t, size_t rank) -> Result<int32_t> {
    auto it = vocab.find(t);
    if (it == vocab.end()) return r.error(fmt::format("{}.merges[{}]", path, rank), fmt::format("token '{}' is not in the vocabulary", t));
    return it->second;
  };
  size_t rank = 0;
  for (const Json& m : j["merges"]) {
    std::string a, b;
    if (m.is_string()) {
      const std::string& line = m.get_ref<const std::string&>();
      if (line.rfind("#version", 0) == 0) continue;  // the legacy merges.txt header
      const size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        return r.error(fmt::format("{}.merges[{}]", path, rank), fmt::format("'{}' is not two tokens separated by one space", line));
      a = line.substr(0, space);
      b = line.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      return r.error(fmt::format("{}.merges[{}]", path, rank), "expected \"a b\" or [\"a\", \"b\"]");
    }
    if (b.size() < prefix_len)
      return r.error(fmt::format("{}.merges[{}]", path, rank), fmt::format("'{}' is shorter than continuing_subword_prefix", b));
    OG_ASSIGN_OR_RETURN(int32_t left, lookup(a, rank));
    OG_ASSIGN_OR_RETURN(int32_t right, lookup(b, rank));
    OG_ASSIGN_OR_RETURN(int32_t merged, lookup(a + b.substr(prefix_len), rank));
    out.merges.push_back({left, right, merged});
    ++rank;
  }
  return Status::ok();
}

// tokenizers' AddedVocabulary::add_tokens as run by the tokenizer.json deserializer.
Status read_added_tokens(const JsonReader& r, const Json& j, const std::unordered_map<std::string, int32_t>& vocab,
                         std::vector<AddedTokenSpec>& out) {
  if (!j.is_array()) return r.error("added_tokens", "not an array");
  std::unordered_map<std::string, int32_t> by_content;
  std::map<int32_t, AddedTokenSpec> by_id;  // last write per id wins
  int64_t next_id = static_cast<int64_t>(vocab.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string path = fmt::format("added_tokens[{}]", i);
    AddedTokenSpec t;
    OG_ASSIGN_OR_RETURN(t.content, r.string(j[i], "content", path));
    OG_ASSIGN_OR_RETURN(t.single_word, r.boolean(j[i], "single_word", path, false));
    OG_ASSIGN_OR_RETURN(t.lstrip, r.boolean(j[i], "lstrip", path, false));
    OG_ASSIGN_OR_RETURN(t.rstrip, r.boolean(j[i], "rstrip", path, false));
    OG_ASSIGN_OR_RETURN(t.special, r.boolean(j[i], "special", path, false));
    OG_ASSIGN_OR_RETURN(t.normalized, r.boolean(j[i], "normalized", path, !t.special));
    if (t.content.empty()) continue;
    const auto same = [&](const AddedTokenSpec& o) {
      return o.content == t.content && o.single_word == t.single_word && o.lstrip == t.lstrip && o.rstrip == t.rstrip &&
             o.normalized == t.normalized && o.special == t.special;
    };
    if (auto it = by_content.find(t.content); it != by_content.end()) {
      auto prev = by_id.find(it->second);
      if (prev != by_id.end() && same(prev->second)) continue;
      t.id = it->second;
    } else if (auto v = vocab.find(t.content); v != vocab.end()) {
      t.id = v->second;
    } else {
      if (next_id > kMaxTokenId) return r.error(path, "added token id exceeds the supported range");
      t.id = static_cast<int32_t>(next_id++);
    }
    by_content[t.content] = t.id;
    by_id[t.id] = t;
  }
  for (auto& [id, t] : by_id) out.push_back(std::move(t));
  return Status::ok();
}

}  // namespace

Result<TokenizerSpec> spec_from_json(std::string_view json_text, const std::string& source) {
  Json root;
  try {
    root = Json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::exception& e) {
    return bad_input("{}: not valid JSON: {}", source, e.what());
  }
  if (!root.is_object()) return bad_input("{}: the top level is not a JSON object", source);
  const JsonReader r{source};
  if (r.has(root, "version")) {
    OG_ASSIGN_OR_RETURN(std::string version, r.string(root, "version", ""));
    if (version != "1.0") return unsupported("{}: version '{}' is not supported (expected \"1.0\")", source, version);
  }
  if (r.has(root, "truncation")) return unsupported("{}: truncation is set; offgraph tokenizes without truncation", source);
  if (r.has(root, "padding")) return unsupported("{}: padding is set; offgraph tokenizes without padding", source);
  if (!r.has(root, "model")) return bad_input("{}: no 'model'", source);

  TokenizerSpec spec;
  std::unordered_map<std::string, int32_t> vocab;
  OG_TRY(read_model(r, root["model"], "model", spec.model, vocab));
  if (r.has(root, "normalizer")) OG_TRY(read_normalizer(r, root["normalizer"], "normalizer", spec.normalizers));
  if (r.has(root, "pre_tokenizer")) OG_TRY(read_pre_tokenizer(r, root["pre_tokenizer"], "pre_tokenizer", spec.pre_tokenizers));
  if (r.has(root, "post_processor")) OG_TRY(read_post_processor(r, root["post_processor"], "post_processor", spec.templates));
  spec.has_decoder = r.has(root, "decoder");
  if (spec.has_decoder) OG_TRY(read_decoder(r, root["decoder"], "decoder", spec.decoders));
  if (r.has(root, "added_tokens")) OG_TRY(read_added_tokens(r, root["added_tokens"], vocab, spec.added_tokens));
  return spec;
}

}  // namespace og::tokenizer
