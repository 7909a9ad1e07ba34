// A reply read back as OpenAI's message parts, piece by piece as it streams: content,
// reasoning_content, and tool calls (a call's id and name first, then its arguments' JSON
// text in fragments). Streaming and whole replies go through the same parser, so the streamed
// parts concatenate to exactly the whole reply's. The text is the TextStream's with special
// tokens marked (constrain/special_marks.h); marks never reach the client.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace og::toolcall {

struct ReplyEvent {
  enum class Kind { kContent, kReasoning, kCallStart, kArguments };
  Kind kind = Kind::kContent;
  std::string text;      // kContent, kReasoning, kArguments: the fragment
  int32_t index = 0;     // kCallStart, kArguments: the call
  std::string id, name;  // kCallStart
};

class ReplyParser {
 public:
  virtual ~ReplyParser() = default;
  virtual void push(std::string_view text, std::vector<ReplyEvent>& out) = 0;
  // The end of the reply: what was held back (a call cut short keeps the arguments it has).
  virtual void finish(std::vector<ReplyEvent>& out) = 0;
};

struct ToolCallOut {
  std::string id, name, arguments;
};
struct Reply {
  std::optional<std::string> content, reasoning;  // absent when the reply had none
  std::vector<ToolCallOut> calls;
};
// The events of one reply, folded.
Reply fold(const std::vector<ReplyEvent>& events);

// A call id as OpenAI writes them ("call_" and 24 letters and digits), or exactly `length`
// letters and digits where the template writes ids of its own (id_length).
std::string new_call_id(int32_t length = 0);

}  // namespace og::toolcall
