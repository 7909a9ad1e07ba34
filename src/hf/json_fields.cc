#include "hf/json_fields.h"

namespace og::hf {

Result<Json> parse_json(const std::string& text, const std::string& what) {
  if (text.empty()) return bad_input("{}: file is empty, expected JSON", what);
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    return bad_input("{}: invalid JSON: {}", what, e.what());
  }
}

namespace {
std::string describe(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}
bool is_integral_number(const Json& v) {
  if (v.is_number_integer()) return true;
  if (v.is_number_float()) {
    double d = v.get<double>();
    // Range first: converting a double outside int64_t is undefined.
    return d >= -9e18 && d <= 9e18 && d == static_cast<double>(static_cast<int64_t>(d));
  }
  return false;
}
}  // namespace

bool JsonFields::has(const std::string& key) const {
  return j_.is_object() && j_.contains(key) && !j_.at(key).is_null();
}

Status JsonFields::missing(const std::string& key) const {
  return bad_input("{}: required field '{}' is missing", file_, field_name(key));
}

Status JsonFields::invalid(const std::string& key, const std::string& expected) const {
  return bad_input("{}: field '{}' must be {}, got {}", file_, field_name(key), expected,
                   has(key) ? describe(j_.at(key)) : std::string("nothing"));
}

Result<int64_t> JsonFields::get_int(const std::string& key) const {
  if (!has(key)) return missing(key);
  const Json& v = j_.at(key);
  if (!is_integral_number(v)) return invalid(key, "an integer");
  return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
}

Result<int64_t> JsonFields::get_int(const std::string& key, int64_t fallback) const {
  if (!has(key)) return fallback;
  return get_int(key);
}

Result<std::optional<int64_t>> JsonFields::get_optional_int(const std::string& key) const {
  if (!has(key)) return std::optional<int64_t>();
  OG_ASSIGN_OR_RETURN(int64_t v, get_int(key));
  return std::optional<int64_t>(v);
}

Result<double> JsonFields::get_double(const std::string& key) const {
  if (!has(key)) return missing(key);
  const Json& v = j_.at(key);
  if (!v.is_number()) return invalid(key, "a number");
  return v.get<double>();
}

Result<double> JsonFields::get_double(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  return get_double(key);
}

Result<std::optional<double>> JsonFields::get_optional_double(const std::string& key) const {
  if (!has(key)) return std::optional<double>();
  OG_ASSIGN_OR_RETURN(double v, get_double(key));
  return std::optional<double>(v);
}

Result<bool> JsonFields::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const Json& v = j_.at(key);
  if (!v.is_boolean()) return invalid(key, "true or false");
  return v.get<bool>();
}

Result<std::string> JsonFields::get_string(const std::string& key) const {
  if (!has(key)) return missing(key);
  const Json& v = j_.at(key);
  if (!v.is_string()) return invalid(key, "a string");
  return v.get<std::string>();
}

Result<std::string> JsonFields::get_string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  return get_string(key);
}

Result<std::vector<int64_t>> JsonFields::get_int_list(const std::string& key) const {
  if (!has(key)) return missing(key);
  const Json& v = j_.at(key);
  std::vector<int64_t> out;
  if (is_integral_number(v)) {
    out.push_back(v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>()));
    return out;
  }
  if (!v.is_array()) return invalid(key, "an integer or a list of integers");
  for (const Json& e : v) {
    if (!is_integral_number(e)) return invalid(key, "a list of integers");
    out.push_back(e.is_number_integer() ? e.get<int64_t>() : static_cast<int64_t>(e.get<double>()));
  }
  return out;
}

Result<std::vector<double>> JsonFields::get_double_list(const std::string& key) const {
  if (!has(key)) return missing(key);
  const Json& v = j_.at(key);
  std::vector<double> out;
  if (v.is_number()) {
    out.push_back(v.get<double>());
    return out;
  }
  if (!v.is_array()) return invalid(key, "a number or a list of numbers");
  for (const Json& e : v) {
    if (!e.is_number()) return invalid(key, "a list of numbers");
    out.push_back(e.get<double>());
  }
  return out;
}

Result<std::vector<std::string>> JsonFields::get_string_list(const std::string& key) const {
  if (!has(key)) return missing(key);
  const Json& v = j_.at(key);
  if (!v.is_array()) return invalid(key, "a list of strings");
  std::vector<std::string> out;
  for (const Json& e : v) {
    if (!e.is_string()) return invalid(key, "a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<JsonFields> JsonFields::get_object(const std::string& key) const {
  if (!has(key)) return missing(key);
  if (!j_.at(key).is_object()) return invalid(key, "an object");
  return JsonFields(j_.at(key), file_, prefix_ + key + ".");
}

}  // namespace og::hf
