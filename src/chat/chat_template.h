// Renders a HuggingFace chat template exactly as transformers' apply_chat_template does.
//
// transformers renders `tokenizer.chat_template` with Jinja2 (ImmutableSandboxedEnvironment,
// trim_blocks, lstrip_blocks, loopcontrols, its own tojson, raise_exception, strftime_now)
// and passes messages, tools=None, documents=None, add_generation_prompt and the tokenizer's
// special tokens (only those that are set). ChatTemplate implements the Jinja subset real
// chat templates use, byte for byte; tests/chat_template_test.cc holds it to Jinja2's output
// on real templates. Parse once, render many times; a ChatTemplate is immutable and can be
// rendered from several threads.
//
// Errors are og::Status values naming the template line: syntax errors and tags Jinja
// rejects (kBadInput), Jinja features outside the subset (kUnsupported: call/with/include
// tags, recursive loops, *args, str.format specs, dict literals with non-string keys,
// integers beyond 64 bits, a namespace holding a namespace), and render errors —
// raise_exception("msg") yields a kBadInput whose message ends with "msg". Values, messages
// and extra_context nested deeper than 100 lists/dicts are kBadInput (Jinja2 would recurse
// until Python's RecursionError).
//
// Known differences that do not raise: case mapping (upper, title, ...) is ASCII only;
// Markup is not modelled, so `"x"|safe + s` does not HTML-escape s; dict.items() is a list.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace og::chat {

struct Message {
  std::string role, content;
};

struct RenderOptions {
  bool add_generation_prompt = true;
  // Absent tokens are undefined in the template, as when tokenizer_config.json has null.
  std::optional<std::string> bos_token, eos_token;
  // Further variables: other special tokens (pad_token, unk_token, ...), tools, documents,
  // date_string, enable_thinking, ... They override the defaults above.
  nlohmann::ordered_json extra_context = nlohmann::ordered_json::object();
  // The local time strftime_now() formats (only date/time fields are read); absent means the
  // system clock. Fixing it makes prompts of date-stamping templates reproducible.
  std::optional<std::tm> now;
};

struct Program;  // the parsed template (chat/ast.h)

class ChatTemplate {
 public:
  static Result<ChatTemplate> parse(std::string_view source);

  Result<std::string> render(const std::vector<Message>& messages, const RenderOptions& options) const;
  // Messages as JSON objects: tool_calls, tool_call_id, reasoning_content, list contents, ...
  Result<std::string> render_json(const nlohmann::ordered_json& messages, const RenderOptions& options) const;

 private:
  explicit ChatTemplate(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const Program> program_;
};

}  // namespace og::chat
