// Chat-template parsing and rendering. Byte 0 % 3 picks the mode, bit 2 is
// add_generation_prompt and bit 3 passes the tool list; the rest is:
//   0  template text, rendered with a fixed tool-calling conversation
//   1  byte 1 picks a real template of tests/data/chat; the rest, split at '\0', is the
//      contents of alternating user/assistant messages (bit 4: the first is a system prompt)
//   2  byte 1 picks a real template; the rest is the messages as JSON (tool_calls, lists, ...)
// Any outcome is fine as long as it is a Status: the sanitizers catch the rest.
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat/chat_template.h"

namespace {

using og::chat::ChatTemplate;
using Json = nlohmann::ordered_json;

constexpr const char* kConversation = R"([
  {"role": "system", "content": "You are terse."},
  {"role": "user", "content": "What's the weather in Paris?"},
  {"role": "assistant", "content": "", "tool_calls": [{"id": "call12345", "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]},
  {"role": "tool", "content": "{\"temperature\": 21}", "tool_call_id": "call12345", "name": "get_weather"},
  {"role": "assistant", "content": "<think>\nLook it up.\n</think>\n\nIt is 21 \u00b0C in Paris."}])";

constexpr const char* kTools = R"([{"type": "function", "function": {"name": "get_weather",
  "description": "Get the current weather in a city", "parameters": {"type": "object",
  "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])";

// The real templates, parsed once, in file-name order.
const std::vector<ChatTemplate>& real_templates() {
  static const std::vector<ChatTemplate> templates = [] {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(OG_FUZZ_CHAT_DIR))
      if (e.path().extension() == ".jinja") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<ChatTemplate> out;
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      auto t = ChatTemplate::parse(ss.str());
      if (!t.is_ok()) __builtin_trap();  // the fixtures themselves must parse
      out.push_back(*t);
    }
    if (out.empty()) __builtin_trap();
    return out;
  }();
  return templates;
}

og::chat::RenderOptions options(uint8_t flags) {
  og::chat::RenderOptions o;
  o.add_generation_prompt = (flags & 4) != 0;
  o.bos_token = "<|begin_of_text|>";
  o.eos_token = "<|eot_id|>";
  o.extra_context["date_string"] = "26 Jul 2024";
  if (flags & 8) o.extra_context["tools"] = Json::parse(kTools);
  o.now = std::tm{};
  o.now->tm_year = 124;
  o.now->tm_mon = 6;
  o.now->tm_mday = 26;
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const og::chat::RenderOptions o = options(flags);
  if (flags % 3 == 0) {
    static const Json conversation = Json::parse(kConversation);
    auto t = ChatTemplate::parse(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
    if (t.is_ok()) (void)t->render_json(conversation, o);
    return 0;
  }
  const auto& templates = real_templates();
  const ChatTemplate& t = templates[data[1] % templates.size()];
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  if (flags % 3 == 1) {
    std::vector<og::chat::Message> messages;
    size_t at = 0;
    do {
      const size_t end = std::min(rest.find('\0', at), rest.size());
      const bool system = messages.empty() && (flags & 16) != 0;
      const size_t turn = messages.size() - ((flags & 16) != 0 ? 1 : 0);
      messages.push_back({system ? "system" : turn % 2 == 0 ? "user" : "assistant", std::string(rest.substr(at, end - at))});
      at = end + 1;
    } while (at <= rest.size());
    (void)t.render(messages, o);
    return 0;
  }
  const Json messages = Json::parse(rest, nullptr, /*allow_exceptions=*/false);
  if (!messages.is_discarded()) (void)t.render_json(messages, o);
  return 0;
}
