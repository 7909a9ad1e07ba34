// Reply parsers and framed grammars: the input is a tool-call syntax as stored (JSON), a NUL
// byte, then a reply's text (special tokens may be marked with 0xFF). Properties: the parse is
// the same whole and in chunks of any size (streamed == non-streamed); a text the syntax's
// grammar accepts (tool "f", arguments any object) parses into calls of "f" whose arguments
// are JSON objects, with no content. Malformed syntaxes end in an error, never a crash.
#include <string>

#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "constrain/matcher.h"
#include "toolcall/registry.h"

namespace {

using namespace og::toolcall;

Reply parse(const ToolCallSyntax& s, const ToolSet& tools, const std::string& text, size_t chunk) {
  auto p = find_format(s.format)->parser(s, &tools, og::constrain::SpecialTexts{});
  std::vector<ReplyEvent> ev;
  for (size_t i = 0; i < text.size(); i += chunk) p->push(std::string_view(text).substr(i, chunk), ev);
  p->finish(ev);
  return fold(ev);
}

bool same(const Reply& a, const Reply& b) {
  if (a.content != b.content || a.reasoning != b.reasoning || a.calls.size() != b.calls.size()) return false;
  for (size_t i = 0; i < a.calls.size(); ++i)
    if (a.calls[i].name != b.calls[i].name || a.calls[i].arguments != b.calls[i].arguments) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  if (nul == std::string::npos) return 0;
  const auto j = nlohmann::ordered_json::parse(input.substr(0, nul), nullptr, false);
  if (j.is_discarded()) return 0;
  auto s = syntax_from_json(j);
  if (!s.is_ok()) return 0;
  const std::string text = input.substr(nul + 1);
  ToolSet tools;
  tools.tools.push_back({"f", {{"type", "object"}}});
  tools.choice = ToolSet::Choice::kRequired;
  const Reply whole = parse(*s, tools, text, text.size() + 1);
  for (size_t chunk : {1, 2, 3, 7})
    if (!same(parse(*s, tools, text, chunk), whole)) std::abort();
  if (s->format != "framed") return 0;
  const ReplyGrammar g = find_format(s->format)->grammar(*s, tools, og::constrain::SpecialTexts{});
  auto grammar = og::constrain::compile_framed_json(*g.framed);
  if (!grammar.is_ok()) return 0;
  og::constrain::Matcher m(*grammar);
  if (!m.advance(text) || !m.accepting() || s->starts_in_reasoning) return 0;
  if (whole.calls.empty() || whole.content) std::abort();
  for (const ToolCallOut& c : whole.calls)
    if (c.name != "f" || !nlohmann::json::parse(c.arguments, nullptr, false).is_object()) std::abort();
  return 0;
}
