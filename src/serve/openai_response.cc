#include "serve/openai_response.h"

namespace og::serve {
namespace {

ojson bytes_of(const std::string& s) {
  ojson b = ojson::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

}  // namespace

const char* finish_reason(generate::StopReason r) {
  switch (r) {
    case generate::StopReason::kStopToken:
    case generate::StopReason::kCallback: return "stop";
    default: return "length";
  }
}

ojson usage_json(int64_t prompt_tokens, const generate::SequenceStats& st) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", st.generated_tokens},
          {"total_tokens", prompt_tokens + st.generated_tokens},
          {"prompt_tokens_details", {{"cached_tokens", st.cached_tokens}}}};
}

ojson choices_usage(const std::vector<ojson>& usages, int32_t n) {
  int64_t prompt = 0, cached = 0, completion = 0;
  for (size_t k = 0; k < usages.size(); ++k) {
    if (k % static_cast<size_t>(n) == 0) {
      prompt += usages[k]["prompt_tokens"].get<int64_t>();
      cached += usages[k]["prompt_tokens_details"]["cached_tokens"].get<int64_t>();
    }
    completion += usages[k]["completion_tokens"].get<int64_t>();
  }
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion},
          {"prompt_tokens_details", {{"cached_tokens", cached}}}};
}

ojson chat_logprobs_json(const std::vector<generate::TokenLogprob>& lps) {
  ojson content = ojson::array();
  for (const auto& t : lps) {
    ojson top = ojson::array();
    for (const auto& [s, lp] : t.top) top.push_back({{"token", s}, {"logprob", lp}, {"bytes", bytes_of(s)}});
    content.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", bytes_of(t.token)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

ojson completion_logprobs_json(const std::vector<generate::TokenLogprob>& lps, size_t offset) {
  ojson tokens = ojson::array(), lp = ojson::array(), top = ojson::array(), offsets = ojson::array();
  for (const auto& t : lps) {
    tokens.push_back(t.token);
    if (t.unconditioned) {  // an echoed prompt's first token, as OpenAI and vLLM give it
      lp.push_back(nullptr);
      top.push_back(nullptr);
    } else {
      lp.push_back(t.logprob);
      ojson m = ojson::object();
      for (const auto& [s, l] : t.top) m[s] = l;
      top.push_back(m);
    }
    offsets.push_back(offset);
    offset += t.token.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", lp}, {"top_logprobs", top}, {"text_offset", offsets}};
}

ojson logprobs_json(bool chat, const std::vector<generate::TokenLogprob>& lps, size_t offset) {
  return chat ? chat_logprobs_json(lps) : completion_logprobs_json(lps, offset);
}

ojson completion_body(const ResponseIdentity& id, const std::string& text, ojson logprobs, const char* finish, ojson usage) {
  ojson choice;
  if (id.chat) {
    choice = {{"index", 0},
              {"message", {{"role", "assistant"}, {"content", text}}},
              {"logprobs", std::move(logprobs)},
              {"finish_reason", finish}};
  } else {
    choice = {{"text", text}, {"index", 0}, {"logprobs", std::move(logprobs)}, {"finish_reason", finish}};
  }
  return {{"id", id.id},
          {"object", id.chat ? "chat.completion" : "text_completion"},
          {"created", id.created},
          {"model", id.model},
          {"choices", ojson::array({std::move(choice)})},
          {"usage", std::move(usage)}};
}

const char* reply_finish_reason(bool made_calls, generate::StopReason r) {
  const char* own = finish_reason(r);
  return made_calls && std::string_view(own) == "stop" ? "tool_calls" : own;  // cut short stays "length"
}

ojson reply_body(const ResponseIdentity& id, const toolcall::Reply& reply, ojson logprobs, const char* finish, ojson usage) {
  ojson body = completion_body(id, reply.content.value_or(""), std::move(logprobs), finish, std::move(usage));
  ojson& message = body["choices"][0]["message"];
  if (!reply.content && !reply.calls.empty()) message["content"] = nullptr;
  if (reply.reasoning) message["reasoning_content"] = *reply.reasoning;
  if (!reply.calls.empty()) {
    ojson calls = ojson::array();
    for (const toolcall::ToolCallOut& c : reply.calls)
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    message["tool_calls"] = std::move(calls);
  }
  return body;
}

std::vector<ojson> reply_deltas(const std::vector<toolcall::ReplyEvent>& events) {
  using Kind = toolcall::ReplyEvent::Kind;
  std::vector<ojson> out;
  for (const toolcall::ReplyEvent& e : events) {
    switch (e.kind) {
      case Kind::kContent: out.push_back({{"content", e.text}}); break;
      case Kind::kReasoning: out.push_back({{"reasoning_content", e.text}}); break;
      case Kind::kCallStart:
        out.push_back({{"tool_calls", ojson::array({{{"index", e.index}, {"id", e.id}, {"type", "function"},
                                                      {"function", {{"name", e.name}, {"arguments", ""}}}}})}});
        break;
      case Kind::kArguments:
        out.push_back({{"tool_calls", ojson::array({{{"index", e.index}, {"function", {{"arguments", e.text}}}}})}});
        break;
    }
  }
  return out;
}

ojson stream_choice(bool chat, ojson delta_or_text, ojson logprobs, ojson finish, int32_t index) {
  if (chat)
    return {{"index", index}, {"delta", std::move(delta_or_text)}, {"logprobs", std::move(logprobs)}, {"finish_reason", std::move(finish)}};
  return {{"text", std::move(delta_or_text)}, {"index", index}, {"logprobs", std::move(logprobs)}, {"finish_reason", std::move(finish)}};
}

ojson stream_chunk(const ResponseIdentity& id, ojson choice, bool usage_null) {
  ojson c = {{"id", id.id},
             {"object", id.chat ? "chat.completion.chunk" : "text_completion"},
             {"created", id.created},
             {"model", id.model},
             {"choices", choice.is_null() ? ojson::array() : ojson::array({std::move(choice)})}};
  if (usage_null) c["usage"] = nullptr;
  return c;
}

std::string to_text(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

}  // namespace og::serve
