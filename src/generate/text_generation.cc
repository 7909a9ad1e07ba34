#include "generate/text_generation.h"

#include "generate/text_stream.h"

namespace og::generate {

Result<std::vector<int32_t>> prompt_tokens(const ModelText& text, const std::string& prompt) {
  return text.tokenizer.encode(prompt, /*add_special=*/true);
}

Result<std::vector<int32_t>> chat_tokens(const ModelText& text, const std::vector<chat::Message>& messages,
                                         bool add_generation_prompt) {
  if (!text.chat_template) return bad_input("the program has no chat template; use `offgraph run` without --chat");
  chat::RenderOptions o = text.render;
  o.add_generation_prompt = add_generation_prompt;
  OG_ASSIGN_OR_RETURN(std::string rendered, text.chat_template->render(messages, o));
  // The template writes BOS itself: encode without adding special tokens, as transformers does.
  return text.tokenizer.encode(rendered, false);
}

Result<GenerateStats> generate_text(runtime::Session& session, const ModelText& text, std::span<const int32_t> prompt,
                                    const GenerateOptions& options, const TextCallback& on_text) {
  TextStream stream(text.tokenizer);
  Status stream_error;
  bool more = true;
  OG_ASSIGN_OR_RETURN(GenerateStats stats, generate(session, prompt, options, [&](int32_t id) {
    auto piece = stream.push(id);
    if (!piece.is_ok()) {
      stream_error = piece.status();
      return false;
    }
    more = piece->empty() || on_text(*piece);
    return more;
  }));
  OG_TRY(stream_error);
  if (more) {
    const std::string tail = stream.finish();
    if (!tail.empty()) on_text(tail);
  }
  return stats;
}

}  // namespace og::generate
