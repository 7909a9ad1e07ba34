// OpenAI's tool fields of a chat request: tools, tool_choice, parallel_tool_calls. The reply's
// syntax, grammar and parser are the program's tool-call format's (toolcall/); the template
// renders `tools`, assistant `tool_calls` and `role: tool` messages its own way
// (transformers' apply_chat_template(..., tools=...)).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/api_error.h"
#include "toolcall/tool_set.h"

namespace og::serve {

struct ToolRequest {
  enum class Choice { kNone, kAuto, kRequired, kNamed };
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // as sent: the template's `tools`
  Choice choice = Choice::kAuto;
  std::string named;       // kNamed: the function
  bool parallel = true;    // parallel_tool_calls
  bool active() const { return !tools.empty() && choice != Choice::kNone; }
};

// tools, tool_choice and parallel_tool_calls of a request body (read in their own key order).
// Errors name the field: tools[i].function.name (OpenAI's name rule: toolcall::valid_tool_name),
// tools[i].function.parameters, tool_choice.
std::optional<ApiError> parse_tool_request(const nlohmann::ordered_json& body, ToolRequest& out);

// The tools as the grammars and parsers read them (toolcall/tool_set.h).
toolcall::ToolSet tool_set(const ToolRequest& t);

}  // namespace og::serve
