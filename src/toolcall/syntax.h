// How a chat template writes tool calls and reasoning: data, learnt from the template at export
// (detect.h) and stored in the program, or given with --tool-call-format. The runtime, the
// server and the parsers read these strings; none of them knows a model family.
//
// `framed` (every template that renders assistant tool_calls): the calls of one reply are
//   prefix  before NAME mid ARGUMENTS after  (separator  before NAME mid ARGUMENTS after)*  suffix
// with ARGUMENTS a JSON value and, where the template writes the call's id, the
// character kIdSlot in `mid` or `after` standing for `id_length` ASCII letters and digits.
//   <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>      (tagged JSON)
//   {"name": "NAME", "parameters": ARGS}                                (bare JSON, one call)
//   [TOOL_CALLS][{"name": "NAME", "arguments": ARGS, "id": "ID"}, ...]  (prefixed JSON list with ids)
//   [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]ARGS                               (prefixed name, id and arguments)
//   <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>ARGS<|call|>  (harmony)
// Where the template writes ARGUMENTS in a notation of its own (constrain/value_notation.h:
// strings between `args_quote`, keys bare, members sorted iff `args_sorted`), they are read
// and constrained in it:
//   <|tool_call>call:NAME{city:<|"|>Paris<|"|>,days:3}<tool_call|>
// `tagged` (templates that write each argument between tags of its own): as `framed`, with
// ARGUMENTS written as  (param_before KEY param_mid VALUE param_after)*  instead of a JSON
// value, VALUE a string as itself and any other value as JSON:
//   <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
//   <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>\n...
//   <tool_call>NAME\n<arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>\n</tool_call>
// and where the template marks a value's kind in its frame, param_mid_json before any value
// that is not a string:
//   <｜DSML｜parameter name="KEY" string="true">TEXT</｜DSML｜parameter>  ... string="false">JSON...
// and where the template prints a value that is not a string with Python's str()
// (`python_values`), that value in Python's notation:  <parameter=f>[{'k': 1}, True]</parameter>
// `generic_json` (templates with no tool syntax): the reply is one JSON object,
//   {"tool_calls": [{"name": NAME, "arguments": ARGS}, ...]} or {"response": TEXT},
// and the system message says so (llama-server's generic format).
//
// Reasoning, either way: text between reasoning_open and reasoning_close is reasoning_content
// (<think>...</think>; harmony's analysis channel); content_open is written before the content
// (harmony's final channel). Strings are plain text as the template writes them; special
// tokens are marked when a grammar or parser is built (constrain/special_marks.h).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace og::toolcall {

inline constexpr char kIdSlot = '\x01';

struct ToolCallSyntax {
  std::string format = "generic_json";  // a registry name (registry.h)
  std::string prefix, before, mid, after, separator, suffix;
  std::string param_before, param_mid, param_after;  // `tagged`: one argument's frame
  std::string param_mid_json;  // `tagged`: param_mid before a value that is not a string, where it differs (DSML)
  int32_t max_calls = 0;   // 0: any number; 1: the template writes one call per message
  int32_t id_length = 0;   // letters and digits in an id slot (0: the template writes no id)
  bool arguments_as_string = false;  // the template reads `arguments` as JSON text, not a mapping
  std::string args_quote;  // `framed`: ARGUMENTS in the template's notation, strings between this
  bool args_sorted = false;  // ... its members in dictsort's order
  bool python_values = false;  // `tagged`: a VALUE that is not a string as Python's str() prints it
  std::string reasoning_open, reasoning_close, content_open;
  bool starts_in_reasoning = false;  // the generation prompt opens the reasoning itself

  bool has_reasoning() const { return !reasoning_open.empty() && !reasoning_close.empty(); }
  bool operator==(const ToolCallSyntax&) const = default;
};

// The stored form (a JSON object; keys are append-only, unknown keys are errors naming them).
nlohmann::ordered_json to_json(const ToolCallSyntax& s);
Result<ToolCallSyntax> syntax_from_json(const nlohmann::ordered_json& j);
// --tool-call-format: "generic_json", a JSON object as to_json writes it, or a file holding one.
Result<ToolCallSyntax> parse_tool_call_format(const std::string& arg);

}  // namespace og::toolcall
