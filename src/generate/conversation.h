// A multi-turn chat on one session. Each turn renders the whole conversation with the chat
// template, keeps the longest prefix the cache already holds (rewinding to it, or starting
// over when a ring no longer holds it) and prefills only the new tokens.
#pragma once

#include <string>
#include <vector>

#include "generate/generator.h"
#include "generate/model_text.h"

namespace og::generate {

class Conversation {
 public:
  Conversation(runtime::Session& session, const ModelText& text, std::string system_prompt = "");

  // Adds a user message, generates the reply (streamed through on_text), records it.
  Result<GenerateStats> turn(const std::string& user, const GenerateOptions& options,
                             const std::function<void(const std::string&)>& on_text);
  void reset();
  bool undo();  // drops the last user/assistant exchange
  Status save(const std::string& path) const;  // cache + PATH.json (messages, cached tokens)
  Status load(const std::string& path);
  const std::vector<chat::Message>& messages() const { return messages_; }

 private:
  Result<std::vector<int32_t>> render_tokens(bool add_generation_prompt) const;

  runtime::Session& session_;
  const ModelText& text_;
  std::vector<chat::Message> messages_;
  std::vector<int32_t> cached_;  // tokens the session holds, in order
};

}  // namespace og::generate
