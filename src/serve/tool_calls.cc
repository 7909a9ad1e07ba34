#include "serve/tool_calls.h"

#include <fmt/format.h>

#include "constrain/json_schema.h"

namespace og::serve {
namespace {

using ojson = nlohmann::ordered_json;

}  // namespace

std::optional<ApiError> parse_tool_request(const ojson& body, ToolRequest& out) {
  if (auto t = body.find("tools"); t != body.end() && !t->is_null()) {
    if (!t->is_array()) return invalid_request("'tools' must be an array of {\"type\": \"function\", \"function\": {...}}", "tools");
    for (size_t i = 0; i < t->size(); ++i) {
      const ojson& tool = (*t)[i];
      const std::string where = fmt::format("tools[{}]", i);
      if (!tool.is_object() || tool.value("type", "") != "function" || !tool.contains("function") || !tool["function"].is_object())
        return invalid_request(where + " must be {\"type\": \"function\", \"function\": {...}}", where);
      const ojson& f = tool["function"];
      if (!f.contains("name") || !f["name"].is_string() || !toolcall::valid_tool_name(f["name"].get<std::string>()))
        return invalid_request(where + ".function.name must be 1 to 64 letters, digits, '_' or '-'", where + ".function.name");
      if (f.contains("parameters") && !f["parameters"].is_null()) {
        if (!f["parameters"].is_object())
          return invalid_request(where + ".function.parameters must be a JSON Schema object", where + ".function.parameters");
        // Compiled alone first, so that a refusal names the tool (the grammar is built later).
        auto g = constrain::compile_json_schema(f["parameters"]);
        if (!g.is_ok()) return invalid_request(where + ".function.parameters: " + g.status().message(), where + ".function.parameters");
      }
      for (const ojson& other : out.tools)
        if (other["function"]["name"] == f["name"])
          return invalid_request(fmt::format("{}.function.name '{}' is defined twice", where, f["name"].get<std::string>()),
                                 where + ".function.name");
      out.tools.push_back(tool);
    }
  }
  if (auto c = body.find("tool_choice"); c != body.end() && !c->is_null()) {
    const auto named = [&](const std::string& name) -> std::optional<ApiError> {
      for (const ojson& tool : out.tools)
        if (tool["function"]["name"] == name) {
          out.choice = ToolRequest::Choice::kNamed;
          out.named = name;
          return std::nullopt;
        }
      return invalid_request(fmt::format("tool_choice names '{}', which is not among the tools", name), "tool_choice");
    };
    if (c->is_string()) {
      const std::string s = c->get<std::string>();
      if (s == "none") out.choice = ToolRequest::Choice::kNone;
      else if (s == "auto") out.choice = ToolRequest::Choice::kAuto;
      else if (s == "required") out.choice = ToolRequest::Choice::kRequired;
      else return invalid_request(fmt::format("tool_choice '{}' must be none, auto, required or a function", s), "tool_choice");
      if (out.choice == ToolRequest::Choice::kRequired && out.tools.empty())
        return invalid_request("tool_choice 'required' needs tools", "tool_choice");
    } else if (c->is_object() && c->value("type", "") == "function" && c->contains("function") && (*c)["function"].is_object() &&
               (*c)["function"].contains("name") && (*c)["function"]["name"].is_string()) {
      if (auto e = named((*c)["function"]["name"].get<std::string>())) return e;
    } else {
      return invalid_request("tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}",
                             "tool_choice");
    }
  }
  if (auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean()) return invalid_request("'parallel_tool_calls' must be a boolean", "parallel_tool_calls");
    out.parallel = p->get<bool>();
  }
  return std::nullopt;
}

toolcall::ToolSet tool_set(const ToolRequest& t) {
  toolcall::ToolSet s;
  for (const ojson& tool : t.tools) {
    const ojson& f = tool["function"];
    s.tools.push_back({f["name"].get<std::string>(),
                       f.contains("parameters") && f["parameters"].is_object() ? f["parameters"] : ojson{{"type", "object"}}});
  }
  s.choice = static_cast<toolcall::ToolSet::Choice>(static_cast<int>(t.choice));
  s.named = t.named;
  s.parallel = t.parallel;
  return s;
}

}  // namespace og::serve
