// Reading a chat template's tool-call and reasoning syntax by rendering probes through it, as
// llama.cpp's chat diff analysis does: a conversation whose assistant turn holds marker tool
// calls (one, then two), one holding marker content, one holding marker reasoning; the text
// each turn adds after the generation prompt is diffed to find the frames around the call's
// name and arguments (syntax.h). A template that renders no tool calls gets generic_json.
#pragma once

#include <string>

#include "chat/chat_template.h"
#include "toolcall/syntax.h"

namespace og::toolcall {

struct Detection {
  ToolCallSyntax syntax;
  std::string why;  // how it was read, or why the generic format was chosen (for export's log)
};

// `options`: the template's special-token texts (bos/eos); tools and the rest are the probe's.
Detection detect_syntax(const chat::ChatTemplate& tmpl, const chat::RenderOptions& options);

}  // namespace og::toolcall
