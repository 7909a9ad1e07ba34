// Typed, checked access to fields of a JSON object (config.json, index files, headers).
// Every error names the file and the dotted field path; JSON null counts as absent,
// as transformers treats it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace og::hf {

using Json = nlohmann::json;

// Parses JSON text; errors name `what` (usually the file path) and the parser's message.
Result<Json> parse_json(const std::string& text, const std::string& what);

class JsonFields {
 public:
  // `where` names the object for messages, e.g. "config.json" or "config.json: text_config".
  JsonFields(const Json& object, std::string file, std::string prefix = "")
      : j_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

  bool has(const std::string& key) const;  // present and not null
  const Json& raw(const std::string& key) const { return j_.at(key); }
  std::string field_name(const std::string& key) const { return prefix_ + key; }
  const std::string& file() const { return file_; }

  Result<int64_t> get_int(const std::string& key) const;
  Result<int64_t> get_int(const std::string& key, int64_t fallback) const;
  Result<std::optional<int64_t>> get_optional_int(const std::string& key) const;
  Result<double> get_double(const std::string& key) const;
  Result<double> get_double(const std::string& key, double fallback) const;
  Result<std::optional<double>> get_optional_double(const std::string& key) const;
  Result<bool> get_bool(const std::string& key, bool fallback) const;
  Result<std::string> get_string(const std::string& key) const;
  Result<std::string> get_string(const std::string& key, const std::string& fallback) const;
  Result<std::vector<int64_t>> get_int_list(const std::string& key) const;     // int or [int]
  Result<std::vector<std::string>> get_string_list(const std::string& key) const;
  Result<std::vector<double>> get_double_list(const std::string& key) const;    // number or [number]
  // A nested object (must be an object if present).
  Result<JsonFields> get_object(const std::string& key) const;

  Status missing(const std::string& key) const;
  Status invalid(const std::string& key, const std::string& expected) const;

 private:
  const Json& j_;
  std::string file_;
  std::string prefix_;
};

}  // namespace og::hf
