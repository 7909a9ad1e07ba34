// The normalizer, pre_tokenizer, post_processor and decoder sections of tokenizer.json.
// Only the types below are implemented; any other type is a kUnsupported error naming the
// JSON path, so a tokenizer offgraph cannot reproduce exactly is never loaded silently.
#include "tokenizer/json_fields.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {

Result<char32_t> JsonReader::single_char(const Json& o, const char* key, const std::string& path) const {
  OG_ASSIGN_OR_RETURN(std::string s, string(o, key, path));
  if (s.empty() || find_invalid_utf8(s) != kValidUtf8) return error(path + "." + key, "not one character");
  size_t i = 0;
  const char32_t c = next_char(s, i);
  if (i != s.size()) return error(path + "." + key, fmt::format("'{}' is not exactly one character", s));
  return c;
}

Result<PatternSpec> JsonReader::pattern(const Json& o, const char* key, const std::string& path) const {
  const std::string where = path + "." + key;
  if (!has(o, key) || !o[key].is_object() || o[key].size() != 1) return error(where, "expected {\"String\": ...} or {\"Regex\": ...}");
  const Json& p = o[key];
  if (p.contains("String") && p["String"].is_string()) return PatternSpec{p["String"].get<std::string>(), false};
  if (p.contains("Regex") && p["Regex"].is_string()) return PatternSpec{p["Regex"].get<std::string>(), true};
  return error(where, "expected {\"String\": ...} or {\"Regex\": ...}");
}

Result<PrependScheme> JsonReader::prepend_scheme(const Json& o, const std::string& path) const {
  OG_ASSIGN_OR_RETURN(std::string s, string_or(o, "prepend_scheme", path, "always"));
  PrependScheme scheme;
  if (s == "always") scheme = PrependScheme::kAlways;
  else if (s == "first") scheme = PrependScheme::kFirst;
  else if (s == "never") scheme = PrependScheme::kNever;
  else return error(path + ".prepend_scheme", fmt::format("'{}' is not always, first or never", s));
  // Legacy files say add_prefix_space; tokenizers rejects false with any scheme but never.
  if (has(o, "add_prefix_space") && o["add_prefix_space"].is_boolean() && !o["add_prefix_space"].get<bool>()) {
    if (scheme != PrependScheme::kNever) return error(path, "add_prefix_space does not match declared prepend_scheme");
  }
  return scheme;
}

namespace {

Result<std::string> type_of(const JsonReader& r, const Json& j, const std::string& path) {
  if (!j.is_object()) return r.error(path, "not a JSON object");
  return r.string(j, "type", path);
}

Result<SplitBehavior> split_behavior(const JsonReader& r, const Json& j, const std::string& path) {
  OG_ASSIGN_OR_RETURN(std::string s, r.string(j, "behavior", path));
  if (s == "Removed") return SplitBehavior::kRemoved;
  if (s == "Isolated") return SplitBehavior::kIsolated;
  if (s == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (s == "Contiguous") return SplitBehavior::kContiguous;
  return r.error(path + ".behavior", fmt::format("unknown behavior '{}'", s));
}

}  // namespace

Status read_normalizer(const JsonReader& r, const Json& j, const std::string& path, std::vector<NormalizerStep>& out) {
  OG_ASSIGN_OR_RETURN(std::string type, type_of(r, j, path));
  using K = NormalizerStep::Kind;
  NormalizerStep step;
  if (type == "Sequence") {
    if (!r.has(j, "normalizers") || !j["normalizers"].is_array()) return r.error(path, "Sequence without a 'normalizers' array");
    for (size_t i = 0; i < j["normalizers"].size(); ++i)
      OG_TRY(read_normalizer(r, j["normalizers"][i], fmt::format("{}.normalizers[{}]", path, i), out));
    return Status::ok();
  } else if (type == "Replace") {
    step.kind = K::kReplace;
    OG_ASSIGN_OR_RETURN(step.pattern, r.pattern(j, "pattern", path));
    OG_ASSIGN_OR_RETURN(step.content, r.string(j, "content", path));
  } else if (type == "Prepend") {
    step.kind = K::kPrepend;
    OG_ASSIGN_OR_RETURN(step.content, r.string(j, "prepend", path));
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    step.kind = type == "NFC" ? K::kNfc : type == "NFD" ? K::kNfd : type == "NFKC" ? K::kNfkc : K::kNfkd;
  } else if (type == "Lowercase") {
    step.kind = K::kLowercase;
  } else if (type == "Strip") {
    step.kind = K::kStrip;
    OG_ASSIGN_OR_RETURN(step.strip_left, r.boolean(j, "strip_left", path, false));
    OG_ASSIGN_OR_RETURN(step.strip_right, r.boolean(j, "strip_right", path, false));
  } else if (type == "StripAccents") {
    step.kind = K::kStripAccents;
  } else if (type == "ByteLevel") {
    step.kind = K::kByteLevel;
  } else {
    return r.unsupported_type(path, type, "Sequence, Replace, Prepend, NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, ByteLevel");
  }
  out.push_back(std::move(step));
  return Status::ok();
}

Status read_pre_tokenizer(const JsonReader& r, const Json& j, const std::string& path, std::vector<PreTokenizerStep>& out) {
  OG_ASSIGN_OR_RETURN(std::string type, type_of(r, j, path));
  using K = PreTokenizerStep::Kind;
  PreTokenizerStep step;
  if (type == "Sequence") {
    if (!r.has(j, "pretokenizers") || !j["pretokenizers"].is_array()) return r.error(path, "Sequence without a 'pretokenizers' array");
    for (size_t i = 0; i < j["pretokenizers"].size(); ++i)
      OG_TRY(read_pre_tokenizer(r, j["pretokenizers"][i], fmt::format("{}.pretokenizers[{}]", path, i), out));
    return Status::ok();
  } else if (type == "Split") {
    step.kind = K::kSplit;
    OG_ASSIGN_OR_RETURN(step.pattern, r.pattern(j, "pattern", path));
    OG_ASSIGN_OR_RETURN(step.behavior, split_behavior(r, j, path));
    OG_ASSIGN_OR_RETURN(step.invert, r.boolean(j, "invert", path, false));
  } else if (type == "ByteLevel") {
    step.kind = K::kByteLevel;
    OG_ASSIGN_OR_RETURN(step.add_prefix_space, r.boolean(j, "add_prefix_space", path, true));
    OG_ASSIGN_OR_RETURN(step.use_regex, r.boolean(j, "use_regex", path, true));
  } else if (type == "Metaspace") {
    step.kind = K::kMetaspace;
    OG_ASSIGN_OR_RETURN(step.replacement, r.single_char(j, "replacement", path));
    OG_ASSIGN_OR_RETURN(step.prepend_scheme, r.prepend_scheme(j, path));
    if (r.has(j, "add_prefix_space") && j["add_prefix_space"] == false) step.prepend_scheme = PrependScheme::kNever;
    OG_ASSIGN_OR_RETURN(step.split, r.boolean(j, "split", path, true));
  } else if (type == "Digits") {
    step.kind = K::kDigits;
    OG_ASSIGN_OR_RETURN(step.individual_digits, r.boolean(j, "individual_digits", path, false));
  } else if (type == "Whitespace") {
    step.kind = K::kWhitespace;
  } else if (type == "WhitespaceSplit") {
    step.kind = K::kWhitespaceSplit;
  } else {
    return r.unsupported_type(path, type, "Sequence, Split, ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit");
  }
  out.push_back(std::move(step));
  return Status::ok();
}

Status read_decoder(const JsonReader& r, const Json& j, const std::string& path, std::vector<DecoderStep>& out) {
  OG_ASSIGN_OR_RETURN(std::string type, type_of(r, j, path));
  using K = DecoderStep::Kind;
  DecoderStep step;
  if (type == "Sequence") {
    if (!r.has(j, "decoders") || !j["decoders"].is_array()) return r.error(path, "Sequence without a 'decoders' array");
    for (size_t i = 0; i < j["decoders"].size(); ++i)
      OG_TRY(read_decoder(r, j["decoders"][i], fmt::format("{}.decoders[{}]", path, i), out));
    return Status::ok();
  } else if (type == "ByteLevel") {
    step.kind = K::kByteLevel;
  } else if (type == "Replace") {
    step.kind = K::kReplace;
    OG_ASSIGN_OR_RETURN(step.pattern, r.pattern(j, "pattern", path));
    OG_ASSIGN_OR_RETURN(step.content, r.string(j, "content", path));
  } else if (type == "ByteFallback") {
    step.kind = K::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = K::kFuse;
  } else if (type == "Strip") {
    step.kind = K::kStrip;
    OG_ASSIGN_OR_RETURN(step.strip_char, r.single_char(j, "content", path));
    OG_ASSIGN_OR_RETURN(step.strip_start, r.count(j, "start", path));
    OG_ASSIGN_OR_RETURN(step.strip_stop, r.count(j, "stop", path));
  } else if (type == "Metaspace") {
    step.kind = K::kMetaspace;
    OG_ASSIGN_OR_RETURN(step.replacement, r.single_char(j, "replacement", path));
    OG_ASSIGN_OR_RETURN(step.prepend_scheme, r.prepend_scheme(j, path));
    if (r.has(j, "add_prefix_space") && j["add_prefix_space"] == false) step.prepend_scheme = PrependScheme::kNever;
  } else {
    return r.unsupported_type(path, type, "Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace");
  }
  out.push_back(std::move(step));
  return Status::ok();
}

namespace {

Result<TemplatePiece> template_piece(const JsonReader& r, const Json& piece, const Json& specials, const std::string& path) {
  std::string name;
  bool is_sequence = false;
  if (piece.is_string()) {  // the short form: "$A", "$A:0", "<bos>", "<bos>:1"
    const std::string s = piece.get<std::string>();
    is_sequence = !s.empty() && s[0] == '$';
    const std::string head = s.substr(0, s.find(':'));
    name = is_sequence ? (head.size() > 1 ? head.substr(1) : std::string(1, 'A')) : head;
  } else if (piece.is_object() && piece.contains("Sequence")) {
    is_sequence = true;
    OG_ASSIGN_OR_RETURN(name, r.string(piece["Sequence"], "id", path + ".Sequence"));
  } else if (piece.is_object() && piece.contains("SpecialToken")) {
    OG_ASSIGN_OR_RETURN(name, r.string(piece["SpecialToken"], "id", path + ".SpecialToken"));
  } else {
    return r.error(path, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
  }
  TemplatePiece out;
  out.is_sequence = is_sequence;
  if (is_sequence) {
    if (name != "A") return r.error(path, fmt::format("sequence '{}' in the single-sequence template", name));
    return out;
  }
  if (!specials.is_object() || !specials.contains(name)) return r.error(path, fmt::format("special token '{}' is not in special_tokens", name));
  const Json& ids = specials[name].contains("ids") ? specials[name]["ids"] : Json();
  if (!ids.is_array()) return r.error(path, fmt::format("special_tokens['{}'].ids is not an array", name));
  for (const Json& id : ids) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > 0x7FFFFFFF) return r.error(path, fmt::format("special_tokens['{}'] has a bad id", name));
    out.ids.push_back(static_cast<int32_t>(id.get<uint64_t>()));
  }
  return out;
}

}  // namespace

Status read_post_processor(const JsonReader& r, const Json& j, const std::string& path, std::vector<TemplateStep>& out) {
  OG_ASSIGN_OR_RETURN(std::string type, type_of(r, j, path));
  if (type == "Sequence") {
    if (!r.has(j, "processors") || !j["processors"].is_array()) return r.error(path, "Sequence without a 'processors' array");
    for (size_t i = 0; i < j["processors"].size(); ++i)
      OG_TRY(read_post_processor(r, j["processors"][i], fmt::format("{}.processors[{}]", path, i), out));
    return Status::ok();
  }
  if (type == "ByteLevel") return Status::ok();  // adjusts offsets only; ids are unchanged
  if (type != "TemplateProcessing") return r.unsupported_type(path, type, "Sequence, ByteLevel, TemplateProcessing");
  if (!r.has(j, "single") || !j["single"].is_array()) return r.error(path, "TemplateProcessing without a 'single' array");
  const Json specials = r.has(j, "special_tokens") ? j["special_tokens"] : Json::object();
  TemplateStep step;
  for (size_t i = 0; i < j["single"].size(); ++i) {
    OG_ASSIGN_OR_RETURN(TemplatePiece piece, template_piece(r, j["single"][i], specials, fmt::format("{}.single[{}]", path, i)));
    step.single.push_back(std::move(piece));
  }
  out.push_back(std::move(step));
  return Status::ok();
}

}  // namespace og::tokenizer
