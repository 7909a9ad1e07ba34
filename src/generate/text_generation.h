// Text in, text out over the generation loop: the prompt tokens of plain text (the
// tokenizer's special tokens added, as `offgraph run`) or of chat messages (rendered by the
// program's template, which writes BOS itself, as `offgraph run --chat`), and generation
// whose tokens come out as text pieces (special tokens skipped; a piece is held back while it
// ends inside a UTF-8 character). Shared by the CLI and the Python module.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "generate/generator.h"
#include "generate/model_text.h"

namespace og::generate {

Result<std::vector<int32_t>> prompt_tokens(const ModelText& text, const std::string& prompt);
Result<std::vector<int32_t>> chat_tokens(const ModelText& text, const std::vector<chat::Message>& messages,
                                         bool add_generation_prompt = true);

// Called with each non-empty piece of text; return false to stop.
using TextCallback = std::function<bool(const std::string& piece)>;

// generate() on `prompt`, streaming the generated tokens as text.
Result<GenerateStats> generate_text(runtime::Session& session, const ModelText& text, std::span<const int32_t> prompt,
                                    const GenerateOptions& options, const TextCallback& on_text);

}  // namespace og::generate
