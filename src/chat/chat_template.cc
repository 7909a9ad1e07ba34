#include "chat/chat_template.h"

#include "chat/interpreter.h"
#include "chat/lexer.h"
#include "chat/parser.h"

namespace og::chat {

struct Program {
  Body body;
};

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  auto segments = lex_template(source);
  if (!segments.is_ok()) return segments.status().with_context("chat template");
  auto body = parse_template(*segments);
  if (!body.is_ok()) return body.status().with_context("chat template");
  auto program = std::make_shared<Program>();
  program->body = std::move(body).value();
  return ChatTemplate(std::move(program));
}

Result<std::string> ChatTemplate::render(const std::vector<Message>& messages,
                                         const RenderOptions& options) const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Message& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
  return render_json(list, options);
}

Result<std::string> ChatTemplate::render_json(const nlohmann::ordered_json& messages,
                                              const RenderOptions& options) const {
  // Globals (builtins) sit below the render variables, which sit below template-level sets.
  auto globals = std::make_shared<Scope>();
  add_globals(*globals, options.now);
  auto vars = std::make_shared<Scope>();
  vars->parent = globals;
  auto message_values = Value::from_json(messages);
  if (!message_values.is_ok()) return message_values.status().with_context("chat template: messages");
  vars->vars["messages"] = std::move(message_values).value();
  vars->vars["tools"] = Value::none();
  vars->vars["documents"] = Value::none();
  vars->vars["add_generation_prompt"] = Value::boolean(options.add_generation_prompt);
  if (options.bos_token) vars->vars["bos_token"] = Value::string(*options.bos_token);
  if (options.eos_token) vars->vars["eos_token"] = Value::string(*options.eos_token);
  if (options.extra_context.is_object()) {
    for (const auto& [k, v] : options.extra_context.items()) {
      auto value = Value::from_json(v);
      if (!value.is_ok()) return value.status().with_context("chat template: " + k);
      vars->vars[k] = std::move(value).value();
    }
  }
  auto top = std::make_shared<Scope>();
  top->parent = vars;
  Interpreter interpreter;
  std::string out;
  Status st = interpreter.render(program_->body, top, out);
  if (!st.is_ok()) return st.with_context("chat template");
  return out;
}

}  // namespace og::chat
