// What a program says about text: its tokenizer (stored in the program, or overridden by a
// tokenizer.json / model directory / other program), chat template, special-token texts and
// stop ids (EOS ids plus the template's end-of-turn token, found by rendering).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "generate/grammar_cache.h"
#include "runtime/model.h"
#include "tokenizer/tokenizer.h"
#include "toolcall/syntax.h"

namespace og::generate {

// A tokenizer from a program file, a tokenizer.json, or a directory holding tokenizer.json.
Result<tokenizer::Tokenizer> load_tokenizer(const std::string& path);

struct ModelText {
  tokenizer::Tokenizer tokenizer;
  std::optional<chat::ChatTemplate> chat_template;  // absent when the program has none
  chat::RenderOptions render;                       // bos/eos texts for the template
  std::vector<int32_t> stop_ids;
  std::shared_ptr<GrammarCache> grammars;           // constrained output over this tokenizer
  // How the template writes tool calls and reasoning: stored at export, or read from the
  // template here for a program exported before it was stored (generic_json without a template).
  toolcall::ToolCallSyntax tool_syntax;
};

// From the program (tokenizer_override: a path for load_tokenizer, or empty).
Result<ModelText> load_model_text(const runtime::Model& model, const std::string& tokenizer_override);

}  // namespace og::generate
