// The tools of one request as the grammars and parsers read them (serve/ parses OpenAI's
// fields into this), and what a format builds from them: the grammar the reply follows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"

namespace og::toolcall {

struct Tool {
  std::string name;
  nlohmann::ordered_json parameters;  // a JSON Schema; {"type": "object"} when the tool has none
};

struct ToolSet {
  enum class Choice { kNone, kAuto, kRequired, kNamed };
  std::vector<Tool> tools;
  Choice choice = Choice::kAuto;
  std::string named;     // kNamed: the function
  bool parallel = true;  // parallel_tool_calls
  // response_format's schema beside the tools: under tool_choice auto, a reply that calls no
  // tool is a JSON text this schema accepts (the formats' grammars offer both).
  std::optional<nlohmann::ordered_json> response_schema;
  bool active() const { return !tools.empty() && choice != Choice::kNone; }
};

// The grammar a reply follows under tools: a JSON schema or literal frames (special tokens
// marked), constrained from the first token, or only from `trigger` on ("lazy": free text
// until the model writes the trigger, which is the grammar's own beginning). A trigger inside
// reasoning (between pause_open and pause_close) does not count.
struct ReplyGrammar {
  std::optional<nlohmann::ordered_json> schema;
  std::optional<constrain::FramedJson> framed;
  std::string trigger;
  std::string pause_open, pause_close;
  bool starts_paused = false;
  bool required = false;  // lazy, yet the reply must reach it (SamplingParams::grammar_required)
};

// Tool names are OpenAI's: 1 to 64 ASCII letters, digits, '_' or '-' (a template writes them
// as they are, so nothing else can be read back unambiguously).
bool valid_tool_name(std::string_view name);

}  // namespace og::toolcall
