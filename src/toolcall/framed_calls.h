// The `framed` format (syntax.h): calls between literal frames learnt from the template.
// The parser doubles as the content/reasoning reader of every format.
#pragma once

#include "toolcall/registry.h"

namespace og::toolcall {

ReplyGrammar framed_grammar(const ToolCallSyntax& s, const ToolSet& tools, const constrain::SpecialTexts& specials);
// The grammar of an answer in the JSON `schema` (response_format without tools): the schema
// from the first token, or, where the generation prompt opens the reasoning, free reasoning
// and then, from its close on, the JSON (the end of the reply is refused until then).
ReplyGrammar answer_grammar(const ToolCallSyntax& s, const nlohmann::ordered_json& schema,
                            const constrain::SpecialTexts& specials);
// The grammar `g` (framed) starts after the reasoning when the generation prompt opens it.
void after_reasoning(const ToolCallSyntax& s, const constrain::SpecialTexts& specials, ReplyGrammar& g);
// tools null: no calls are read (content and reasoning only).
std::unique_ptr<ReplyParser> framed_parser(const ToolCallSyntax& s, const ToolSet* tools, const constrain::SpecialTexts& specials);

}  // namespace og::toolcall
