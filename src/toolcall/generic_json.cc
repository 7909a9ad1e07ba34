#include "toolcall/generic_json.h"

#include "toolcall/framed_calls.h"

namespace og::toolcall {
namespace {

using ojson = nlohmann::ordered_json;
using Kind = ReplyEvent::Kind;

ojson reply_schema(const ToolSet& t) {
  ojson calls = ojson::array();
  for (const Tool& tool : t.tools) {
    if (t.choice == ToolSet::Choice::kNamed && tool.name != t.named) continue;
    calls.push_back({{"type", "object"},
                     {"properties", {{"name", {{"const", tool.name}}}, {"arguments", tool.parameters}}},
                     {"required", {"name", "arguments"}},
                     {"additionalProperties", false}});
  }
  ojson list = {{"type", "array"}, {"items", {{"anyOf", calls}}}, {"minItems", 1}};
  if (!t.parallel) list["maxItems"] = 1;
  const ojson with_calls = {{"type", "object"}, {"properties", {{"tool_calls", list}}}, {"required", {"tool_calls"}},
                            {"additionalProperties", false}};
  if (t.choice != ToolSet::Choice::kAuto) return with_calls;
  // The answer: text, or a JSON value of response_format's schema.
  const ojson answer = t.response_schema ? *t.response_schema : ojson{{"type", "string"}};
  const ojson with_response = {{"type", "object"}, {"properties", {{"response", answer}}},
                               {"required", {"response"}}, {"additionalProperties", false}};
  return {{"anyOf", {with_calls, with_response}}};
}

// Content and reasoning as the framed reader splits them; the content, held whole, is the
// JSON object read back at the end.
class GenericParser final : public ReplyParser {
 public:
  // json_answer: the answer is response_format's JSON value, given as its JSON text.
  GenericParser(const ToolCallSyntax& s, const constrain::SpecialTexts& sp, bool json_answer)
      : inner_(framed_parser(s, nullptr, sp)), json_answer_(json_answer) {}
  void push(std::string_view text, std::vector<ReplyEvent>& out) override {
    std::vector<ReplyEvent> ev;
    inner_->push(text, ev);
    take(ev, out);
  }
  void finish(std::vector<ReplyEvent>& out) override {
    std::vector<ReplyEvent> ev;
    inner_->finish(ev);
    take(ev, out);
    const ojson j = ojson::parse(content_, nullptr, false);
    if (j.is_object() && j.contains("response") && json_answer_) {
      out.push_back({.kind = Kind::kContent, .text = j["response"].dump()});
    } else if (j.is_object() && j.contains("response") && j["response"].is_string()) {
      out.push_back({.kind = Kind::kContent, .text = j["response"].get<std::string>()});
    } else if (j.is_object() && j.contains("tool_calls") && j["tool_calls"].is_array()) {
      int32_t i = 0;
      for (const ojson& c : j["tool_calls"]) {
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string()) continue;
        out.push_back({.kind = Kind::kCallStart, .index = i, .id = new_call_id(), .name = c["name"].get<std::string>()});
        out.push_back({.kind = Kind::kArguments, .text = c.contains("arguments") ? c["arguments"].dump() : "{}", .index = i});
        ++i;
      }
    } else if (!content_.empty()) {
      out.push_back({.kind = Kind::kContent, .text = content_});  // not whole (max_tokens): as it is
    }
  }

 private:
  void take(std::vector<ReplyEvent>& ev, std::vector<ReplyEvent>& out) {
    for (ReplyEvent& e : ev)
      if (e.kind == Kind::kContent) content_ += e.text;
      else out.push_back(std::move(e));
  }
  std::unique_ptr<ReplyParser> inner_;
  bool json_answer_ = false;
  std::string content_;
};

}  // namespace

std::string generic_hint(const ToolSet& t) {
  std::string s = "Respond with one JSON object: {\"tool_calls\": [{\"name\": <function name>, \"arguments\": <its "
                  "arguments>}]} to call ";
  s += t.choice == ToolSet::Choice::kNamed ? "the function " + t.named : t.parallel ? "functions" : "one function";
  if (t.choice == ToolSet::Choice::kAuto) s += ", or {\"response\": <your answer>} to answer the user";
  return s + ".";
}

ReplyGrammar generic_grammar(const ToolCallSyntax&, const ToolSet& tools, const constrain::SpecialTexts&) {
  ReplyGrammar g;
  g.schema = reply_schema(tools);
  return g;
}

std::unique_ptr<ReplyParser> generic_parser(const ToolCallSyntax& s, const ToolSet* tools, const constrain::SpecialTexts& sp) {
  if (!tools || !tools->active()) return framed_parser(s, nullptr, sp);
  return std::make_unique<GenericParser>(s, sp, tools->response_schema.has_value());
}

}  // namespace og::toolcall
