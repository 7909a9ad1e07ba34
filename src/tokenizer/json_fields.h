// Internal to json_reader.cc / json_components.cc: checked access to tokenizer.json fields.
// Every error names the file and the JSON path ("pre_tokenizer.pretokenizers[0].pattern").
// JSON null counts as absent, as tokenizers' Option<T> fields treat it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tokenizer/spec.h"

namespace og::tokenizer {

using Json = nlohmann::json;

struct JsonReader {
  std::string source;

  Status error(const std::string& path, const std::string& what) const {
    return bad_input("{}: {}: {}", source, path.empty() ? "(top level)" : path, what);
  }
  Status unsupported_type(const std::string& path, const std::string& type, const std::string& supported) const {
    return unsupported("{}: {}: type '{}' is not supported (supported: {})", source, path, type, supported);
  }
  bool has(const Json& o, const char* key) const { return o.is_object() && o.contains(key) && !o[key].is_null(); }

  Result<std::string> string(const Json& o, const char* key, const std::string& path) const {
    if (!has(o, key)) return error(path, fmt::format("missing '{}'", key));
    if (!o[key].is_string()) return error(path + "." + key, "not a string");
    return o[key].get<std::string>();
  }
  Result<std::string> string_or(const Json& o, const char* key, const std::string& path, const char* fallback) const {
    if (!has(o, key)) return std::string(fallback);
    return string(o, key, path);
  }
  Result<bool> boolean(const Json& o, const char* key, const std::string& path, bool fallback) const {
    if (!has(o, key)) return fallback;
    if (!o[key].is_boolean()) return error(path + "." + key, "not a boolean");
    return o[key].get<bool>();
  }
  Result<double> number(const Json& o, const char* key, const std::string& path) const {
    if (!has(o, key) || !o[key].is_number()) return error(path + "." + key, "missing or not a number");
    return o[key].get<double>();
  }
  Result<uint32_t> count(const Json& o, const char* key, const std::string& path) const {
    if (!has(o, key) || !o[key].is_number_unsigned() || o[key].get<uint64_t>() > 0xFFFFFFFFu)
      return error(path + "." + key, "missing or not a non-negative integer");
    return static_cast<uint32_t>(o[key].get<uint64_t>());
  }
  // A Rust `char` field: a string holding exactly one character.
  Result<char32_t> single_char(const Json& o, const char* key, const std::string& path) const;
  // {"String": s} or {"Regex": r}.
  Result<PatternSpec> pattern(const Json& o, const char* key, const std::string& path) const;
  Result<PrependScheme> prepend_scheme(const Json& o, const std::string& path) const;
};

// Each appends its component (flattening Sequence) or returns an error naming `path`.
Status read_normalizer(const JsonReader& r, const Json& j, const std::string& path, std::vector<NormalizerStep>& out);
Status read_pre_tokenizer(const JsonReader& r, const Json& j, const std::string& path, std::vector<PreTokenizerStep>& out);
Status read_decoder(const JsonReader& r, const Json& j, const std::string& path, std::vector<DecoderStep>& out);
Status read_post_processor(const JsonReader& r, const Json& j, const std::string& path, std::vector<TemplateStep>& out);

}  // namespace og::tokenizer
