#include "toolcall/syntax.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "toolcall/registry.h"

namespace og::toolcall {

using ojson = nlohmann::ordered_json;

ojson to_json(const ToolCallSyntax& s) {
  ojson j = {{"format", s.format}};
  const auto put = [&j](const char* k, const std::string& v) {
    if (!v.empty()) j[k] = v;
  };
  put("prefix", s.prefix), put("before", s.before), put("mid", s.mid), put("after", s.after);
  put("separator", s.separator), put("suffix", s.suffix);
  put("param_before", s.param_before), put("param_mid", s.param_mid), put("param_after", s.param_after);
  put("param_mid_json", s.param_mid_json);
  if (s.max_calls) j["max_calls"] = s.max_calls;
  if (s.id_length) j["id_length"] = s.id_length;
  if (s.arguments_as_string) j["arguments_as_string"] = true;
  put("args_quote", s.args_quote);
  if (s.args_sorted) j["args_sorted"] = true;
  if (s.python_values) j["python_values"] = true;
  put("reasoning_open", s.reasoning_open), put("reasoning_close", s.reasoning_close), put("content_open", s.content_open);
  if (s.starts_in_reasoning) j["starts_in_reasoning"] = true;
  return j;
}

Result<ToolCallSyntax> syntax_from_json(const ojson& j) {
  if (!j.is_object()) return bad_input("tool-call format: expected a JSON object");
  ToolCallSyntax s;
  for (const auto& [key, v] : j.items()) {
    std::string* text = key == "format"            ? &s.format
                        : key == "prefix"          ? &s.prefix
                        : key == "before"          ? &s.before
                        : key == "mid"             ? &s.mid
                        : key == "after"           ? &s.after
                        : key == "separator"       ? &s.separator
                        : key == "suffix"          ? &s.suffix
                        : key == "reasoning_open"  ? &s.reasoning_open
                        : key == "reasoning_close" ? &s.reasoning_close
                        : key == "content_open"    ? &s.content_open
                        : key == "param_before"    ? &s.param_before
                        : key == "param_mid"       ? &s.param_mid
                        : key == "param_after"     ? &s.param_after
                        : key == "param_mid_json"  ? &s.param_mid_json
                        : key == "args_quote"      ? &s.args_quote
                                                   : nullptr;
    if (text) {
      if (!v.is_string()) return bad_input("tool-call format: '{}' must be a string", key);
      *text = v.get<std::string>();
    } else if (key == "max_calls" || key == "id_length") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 64)
        return bad_input("tool-call format: '{}' must be an integer in [0, 64]", key);
      (key == "max_calls" ? s.max_calls : s.id_length) = v.get<int32_t>();
    } else if (key == "arguments_as_string" || key == "starts_in_reasoning" || key == "args_sorted" || key == "python_values") {
      if (!v.is_boolean()) return bad_input("tool-call format: '{}' must be a boolean", key);
      (key == "arguments_as_string" ? s.arguments_as_string
       : key == "args_sorted"       ? s.args_sorted
       : key == "python_values"     ? s.python_values
                                    : s.starts_in_reasoning) = v.get<bool>();
    } else {
      return bad_input("tool-call format: unknown key '{}'", key);
    }
  }
  if (!find_format(s.format)) return bad_input("tool-call format: unknown format '{}' ({})", s.format, format_names());
  if ((s.format == "framed" || s.format == "tagged") && (s.before.empty() && s.prefix.empty()))
    return bad_input("tool-call format: a {} format needs 'prefix' or 'before' (the text that starts a call)", s.format);
  if ((s.format == "tagged") != !(s.param_before.empty() && s.param_mid.empty() && s.param_after.empty() && s.param_mid_json.empty()))
    return bad_input("tool-call format: 'param_before', 'param_mid', 'param_mid_json' and 'param_after' belong to the tagged format");
  if (s.format == "tagged" && (s.param_before.empty() || s.param_mid.empty() || s.param_after.empty()))
    return bad_input("tool-call format: a tagged format needs 'param_before', 'param_mid' and 'param_after' (the text around each argument)");
  if (!s.args_quote.empty() && s.format != "framed")
    return bad_input("tool-call format: 'args_quote' (arguments in the template's notation) belongs to the framed format");
  if (s.python_values && s.format != "tagged")
    return bad_input("tool-call format: 'python_values' (values printed by Python's str()) belongs to the tagged format");
  if (s.args_sorted && s.args_quote.empty())
    return bad_input("tool-call format: 'args_sorted' needs 'args_quote' (JSON arguments keep the schema's order)");
  if (s.reasoning_open.empty() != s.reasoning_close.empty())
    return bad_input("tool-call format: 'reasoning_open' and 'reasoning_close' come together");
  if ((s.prefix + s.separator + s.suffix).find(kIdSlot) != std::string::npos)
    return bad_input("tool-call format: an id slot (\\u0001) belongs in 'before', 'mid' or 'after', not 'prefix', 'separator' or 'suffix'");
  const bool slot = (s.before + s.mid + s.after).find(kIdSlot) != std::string::npos;
  if (slot != (s.id_length > 0)) return bad_input("tool-call format: an id slot (\\u0001) in 'before', 'mid' or 'after' needs 'id_length', and back");
  return s;
}

Result<ToolCallSyntax> parse_tool_call_format(const std::string& arg) {
  if (arg == "generic_json") return ToolCallSyntax{};
  std::string text = arg;
  if (!arg.empty() && arg.front() != '{') {
    std::ifstream f(arg, std::ios::binary);
    if (!f) return usage_error("--tool-call-format '{}': neither generic_json, a JSON object, nor a readable file", arg);
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  const ojson j = ojson::parse(text, nullptr, false);
  if (j.is_discarded()) return usage_error("--tool-call-format: not valid JSON");
  auto s = syntax_from_json(j);
  if (!s.is_ok()) return usage_error("--tool-call-format: {}", s.status().message());
  return s;
}

}  // namespace og::toolcall
