// The tool-call formats, by the syntax they read (never by family): one small file each and
// one line in registry.cc. A format turns a ToolCallSyntax and a request's tools into the
// grammar the reply follows and the parser that reads it back.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "constrain/special_marks.h"
#include "toolcall/reply_parser.h"
#include "toolcall/syntax.h"
#include "toolcall/tool_set.h"

namespace og::toolcall {

struct Format {
  const char* name;
  // Text for the system message telling the model the format ("" when the template says it).
  std::string (*hint)(const ToolSet& tools);
  ReplyGrammar (*grammar)(const ToolCallSyntax& syntax, const ToolSet& tools, const constrain::SpecialTexts& specials);
  // tools: null when no tools are active (the parser then reads content and reasoning only).
  std::unique_ptr<ReplyParser> (*parser)(const ToolCallSyntax& syntax, const ToolSet* tools, const constrain::SpecialTexts& specials);
};

const Format* find_format(std::string_view name);
std::string format_names();  // "framed, generic_json"

}  // namespace og::toolcall
