// The `generic_json` format (syntax.h), llama-server's for templates with no tool syntax of
// their own: the reply is one JSON object, {"tool_calls": [{"name", "arguments"}, ...]} or
// (tool_choice auto) {"response": "..."}, each call's arguments valid against its tool's
// parameters; the system message tells the model so.
#pragma once

#include "toolcall/registry.h"

namespace og::toolcall {

std::string generic_hint(const ToolSet& tools);
ReplyGrammar generic_grammar(const ToolCallSyntax& s, const ToolSet& tools, const constrain::SpecialTexts& specials);
std::unique_ptr<ReplyParser> generic_parser(const ToolCallSyntax& s, const ToolSet* tools, const constrain::SpecialTexts& specials);

}  // namespace og::toolcall
