#include "toolcall/reply_parser.h"

#include <random>

#include <fmt/format.h>

#include "toolcall/tool_set.h"

namespace og::toolcall {

Reply fold(const std::vector<ReplyEvent>& events) {
  Reply r;
  for (const ReplyEvent& e : events) {
    switch (e.kind) {
      case ReplyEvent::Kind::kContent: r.content = r.content.value_or("") + e.text; break;
      case ReplyEvent::Kind::kReasoning: r.reasoning = r.reasoning.value_or("") + e.text; break;
      case ReplyEvent::Kind::kCallStart: r.calls.push_back({e.id, e.name, ""}); break;
      case ReplyEvent::Kind::kArguments:
        if (e.index >= 0 && static_cast<size_t>(e.index) < r.calls.size()) r.calls[static_cast<size_t>(e.index)].arguments += e.text;
        break;
    }
  }
  return r;
}

std::string new_call_id(int32_t length) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlnum[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string id = length > 0 ? "" : "call_";
  for (int32_t i = 0; i < (length > 0 ? length : 24); ++i) id += kAlnum[rng() % 62];
  return id;
}

bool valid_tool_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace og::toolcall
