// The `framed` format (syntax.h): calls between literal frames learnt from the template.
// The parser doubles as the content/reasoning reader of every format.
#pragma once

#include "toolcall/registry.h"

namespace og::toolcall {

ReplyGrammar framed_grammar(const ToolCallSyntax& s, const ToolSet& tools, const constrain::SpecialTexts& specials);
// tools null: no calls are read (content and reasoning only).
std::unique_ptr<ReplyParser> framed_parser(const ToolCallSyntax& s, const ToolSet* tools, const constrain::SpecialTexts& specials);

}  // namespace og::toolcall
