// Tool calling, in the generic JSON format (the one llama-server uses for templates whose own tool-call
// syntax offgraph does not read yet): the reply is constrained to one JSON object, either
// {"tool_calls": [{"name": ..., "arguments": {...}}, ...]} or {"response": "..."}, each
// call's arguments valid against its tool's `parameters`, and is turned back into OpenAI's
// `tool_calls` or `content`. The template still renders `tools`, assistant `tool_calls` and
// `role: tool` messages its own way (transformers' apply_chat_template(..., tools=...)).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/api_error.h"

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
// Errors name the field: tools[i].function.name, tools[i].function.parameters, tool_choice.
std::optional<ApiError> parse_tool_request(const nlohmann::ordered_json& body, ToolRequest& out);

// The schema the reply follows when tools are active (choice auto, required or named).
nlohmann::ordered_json tool_reply_schema(const ToolRequest& t);

// The system text that tells the model the format (the grammar enforces it either way).
std::string tool_format_hint(const ToolRequest& t);

struct ToolCall {
  std::string id, name, arguments;  // arguments: JSON text
};
struct ToolReply {
  std::optional<std::string> content;  // {"response": ...}, or the raw text when it is not whole
  std::vector<ToolCall> calls;
};
// The reply's text read back (a text cut short by max_tokens comes back as content).
ToolReply read_tool_reply(const std::string& text);

}  // namespace og::serve
