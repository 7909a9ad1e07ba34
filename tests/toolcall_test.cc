// og::toolcall: each real template's tool-call and reasoning syntax read by rendering probes
// through it (pinned per template: the strings are the template's own, checked against
// Jinja2's renderings by hand once and kept here), then held to what the template itself
// writes: a conversation with tool calls rendered through the template is read back by the
// parser (whole and in every chunking alike) into the same calls, and accepted by the
// grammar, which refuses arguments outside their tool's schema.
#include <cctype>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "constrain/json_schema.h"
#include "constrain/matcher.h"
#include "toolcall/detect.h"
#include "toolcall/framed_calls.h"
#include "toolcall/notation_reader.h"
#include "toolcall/python_literal.h"
#include "toolcall/registry.h"
#include "test_util.h"

namespace og::toolcall {
namespace {

using ojson = nlohmann::ordered_json;
using og::testing::read_file;

const ojson& oracle() {
  static const ojson j = [] {
    std::ifstream f(std::string(OG_TEST_DATA) + "/chat/expected.json");
    return ojson::parse(f);
  }();
  return j;
}

struct Loaded {
  chat::ChatTemplate tmpl;
  chat::RenderOptions options;
};
Loaded load(const std::string& name) {
  const ojson& t = oracle()["templates"][name];
  auto parsed = chat::ChatTemplate::parse(read_file(std::string(OG_TEST_DATA) + "/chat/" + t["file"].get<std::string>()));
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
  chat::RenderOptions o;
  for (const auto& [k, v] : t["special_tokens"].items()) {
    if (k == "bos_token") o.bos_token = v.get<std::string>();
    else if (k == "eos_token") o.eos_token = v.get<std::string>();
    else o.extra_context[k] = v;
  }
  o.extra_context["date_string"] = "26 Jul 2024";
  std::tm now{};
  now.tm_year = 124, now.tm_mon = 6, now.tm_mday = 26;
  o.now = now;
  return {std::move(parsed).value(), o};
}

// What each real template writes (syntax.h). Templates with no tool syntax of their own get
// the generic format; those with reasoning keep their reasoning frames.
const std::map<std::string, ojson>& expected() {
  static const std::map<std::string, ojson> m = [] {
    const ojson hermes = {{"format", "framed"}, {"before", "<tool_call>\n{\"name\": \""}, {"mid", "\", \"arguments\": "},
                          {"after", "}\n</tool_call>"}, {"separator", "\n"}};
    const ojson llama31 = {{"format", "framed"}, {"before", "{\"name\": \""}, {"mid", "\", \"parameters\": "}, {"after", "}"},
                           {"max_calls", 1}};
    const ojson deepseek = {{"format", "framed"},
                            {"prefix", "<｜tool▁calls▁begin｜>"},
                            {"before", "<｜tool▁call▁begin｜>function<｜tool▁sep｜>"},
                            {"mid", "\n```json\n"},
                            {"after", "\n```<｜tool▁call▁end｜>"},
                            {"separator", "\n"},
                            {"suffix", "<｜tool▁calls▁end｜>"},
                            {"arguments_as_string", true}};
    ojson qwen3 = hermes;
    qwen3["reasoning_open"] = "<think>", qwen3["reasoning_close"] = "</think>";
    ojson r1 = deepseek;
    r1["reasoning_open"] = "<think>", r1["reasoning_close"] = "</think>", r1["starts_in_reasoning"] = true;
    return std::map<std::string, ojson>{
        {"llama3", {{"format", "generic_json"}}},
        {"llama3_lenml31", {{"format", "generic_json"}}},
        {"llama3_1", llama31},
        {"llama3_2", llama31},
        {"gemma2", {{"format", "generic_json"}}},
        {"gemma3", {{"format", "generic_json"}}},
        {"qwen2_5", hermes},
        {"qwen3", qwen3},
        {"qwq", hermes},  // its generation prompt closes the reasoning it opens (no enable_thinking)
        {"phi3_5", {{"format", "generic_json"}}},
        {"mistral_nemo", {{"format", "framed"}, {"prefix", "[TOOL_CALLS]["}, {"before", "{\"name\": \""},
                          {"mid", "\", \"arguments\": "}, {"after", ", \"id\": \"\x01\"}"}, {"separator", ", "},
                          {"suffix", "]"}, {"id_length", 9}}},
        {"mistral_small_3_2", {{"format", "framed"}, {"before", "[TOOL_CALLS]"}, {"mid", "[CALL_ID]\x01[ARGS]"}, {"id_length", 9}}},
        {"smollm3", {{"format", "generic_json"}}},
        {"deepseek_v3", deepseek},
        {"deepseek_r1_distill", r1},
        {"hermes3_tool_use", hermes},
        {"gpt_oss", {{"format", "framed"}, {"before", " to=functions."}, {"mid", "<|channel|>commentary json<|message|>"},
                     {"after", "<|call|>"}, {"max_calls", 1}, {"reasoning_open", "<|channel|>analysis<|message|>"},
                     {"reasoning_close", "<|end|><|start|>assistant"}, {"content_open", "<|channel|>final<|message|>"}}},
    };
  }();
  return m;
}

std::vector<std::string> template_names() {
  std::vector<std::string> v;
  for (const auto& [k, _] : oracle()["templates"].items()) v.push_back(k);
  return v;
}

class Template : public ::testing::TestWithParam<std::string> {};

// llama.cpp's templates (lcpp_*.jinja): what detection reads from each, and why, reviewed
// against the template's own text (tests/data/chat/tool_syntax.json): framed ones, tagged ones
// (one tag pair per argument: Qwen3-Coder, GLM, MiniMax-M2, Seed-OSS, DeepSeek-V3.2's DSML),
// framed ones whose arguments are in the template's own notation (Gemma 4), and those it cannot
// read, which fall back to the generic format: templates that never write a call (Granite 3.3,
// LFM2) or refuse to (Kimi-K2-Instruct appends to a list, which transformers' sandbox forbids).
const ojson& more_expected() {
  static const ojson j = ojson::parse(read_file(std::string(OG_TEST_DATA) + "/chat/tool_syntax.json"));
  return j;
}

TEST_P(Template, SyntaxIsReadFromTheTemplate) {
  Loaded l = load(GetParam());
  const Detection d = detect_syntax(l.tmpl, l.options);
  if (more_expected().contains(GetParam())) {
    EXPECT_EQ(to_json(d.syntax), more_expected()[GetParam()]["syntax"]) << d.why;
    EXPECT_EQ(d.why, more_expected()[GetParam()]["why"].get<std::string>());
  } else {
    ASSERT_TRUE(expected().count(GetParam())) << "no expectation for " << GetParam() << ": " << to_json(d.syntax).dump();
    EXPECT_EQ(to_json(d.syntax), expected().at(GetParam())) << d.why;
  }
  // The stored form reads back to the same syntax.
  auto back = syntax_from_json(to_json(d.syntax));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(*back, d.syntax);
}

INSTANTIATE_TEST_SUITE_P(RealTemplates, Template, ::testing::ValuesIn(template_names()));

// Tools whose arguments exercise the parser: braces and quotes inside strings, nesting,
// non-ASCII text.
ToolSet test_tools() {
  ToolSet t;
  t.tools.push_back({"get_weather", ojson::parse(R"({"type": "object", "properties": {"city": {"type": "string"},
      "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false})")});
  t.tools.push_back({"search-docs", ojson::parse(R"({"type": "object", "properties": {"query": {"type": "string"},
      "filters": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}}}}},
      "required": ["query", "filters"]})")});
  t.choice = ToolSet::Choice::kRequired;
  return t;
}

struct Call {
  std::string name;
  ojson args;
};
std::vector<Call> test_calls() {
  return {{"get_weather", {{"city", "Zürich {\"x\": [1]} \\ \"q\""}, {"unit", "celsius"}}},
          {"search-docs", {{"query", "a}b]c"}, {"filters", ojson::array({{{"k", 1}}, {{"k", -20}}})}}}};
}

// The text the template's assistant turn with these calls adds after the generation prompt,
// without its end of turn (what a model would write before its end token).
std::optional<std::string> rendered_reply(const Loaded& l, const ToolCallSyntax& s, const std::vector<Call>& calls) {
  const ojson user = {{"role", "user"}, {"content", "hi"}};
  ojson tool_calls = ojson::array();
  for (size_t i = 0; i < calls.size(); ++i)
    tool_calls.push_back({{"id", fmt::format("abcdefgh{}", i)}, {"type", "function"},
                          {"function", {{"name", calls[i].name}, {"arguments", s.arguments_as_string ? ojson(calls[i].args.dump()) : calls[i].args}}}});
  chat::RenderOptions o = l.options;
  o.extra_context["tools"] = ojson::array();
  for (const Tool& t : test_tools().tools)
    o.extra_context["tools"].push_back(
        {{"type", "function"}, {"function", {{"name", t.name}, {"description", "d"}, {"parameters", t.parameters}}}});
  o.add_generation_prompt = true;
  auto g = l.tmpl.render_json(ojson::array({user}), o);
  o.add_generation_prompt = false;
  // content null as clients send it, else "" for templates that need a string.
  auto all = l.tmpl.render_json(ojson::array({user, {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", tool_calls}}}), o);
  // (GLM and MiniMax-M2 print content null as Python's None, as transformers would.)
  if (!all.is_ok() || all->find(calls[0].name) == std::string::npos || all->find("None") != std::string::npos)
    all = l.tmpl.render_json(ojson::array({user, {{"role", "assistant"}, {"content", ""}, {"tool_calls", tool_calls}}}), o);
  if (!g.is_ok() || !all.is_ok()) return std::nullopt;
  size_t n = 0;  // where the turn leaves the generation prompt (QwQ's and R1's end in "<think>\n")
  while (n < g->size() && n < all->size() && (*g)[n] == (*all)[n]) ++n;
  while (n > 0 && n < g->size() && (*g)[n - 1] != '\n' && (*g)[n - 1] != '>') --n;
  std::string r = all->substr(n);
  // The tag that ends the prompt's cut tail, written again by the turn ("<think></think>" then
  // "</think>"), is the prompt's, not the model's (as detection reads it).
  const std::string tail = g->substr(n);
  for (size_t k = tail.size(); k-- > 0;)
    if (tail[k] == '<' && r.starts_with(std::string_view(tail).substr(k))) {
      r.erase(0, tail.size() - k);
      break;
    }
  // An empty reasoning block the template writes before the calls (Qwen3) is not the model's.
  if (s.has_reasoning()) {
    std::string_view v(r);
    size_t k = 0;
    const auto skip_ws = [&] { while (k < v.size() && std::isspace(static_cast<unsigned char>(v[k]))) ++k; };
    skip_ws();
    if (s.starts_in_reasoning && v.substr(k).starts_with(s.reasoning_close)) {  // the close of an empty one the prompt opened
      k += s.reasoning_close.size();
      skip_ws();
      r = r.substr(k);
    } else if (v.substr(k).starts_with(s.reasoning_open)) {
      k += s.reasoning_open.size();
      skip_ws();
      if (v.substr(k).starts_with(s.reasoning_close)) {
        k += s.reasoning_close.size();
        skip_ws();
        r = r.substr(k);
      }
    }
  }
  // The end of turn: what follows the content of a plain assistant turn.
  auto c = l.tmpl.render_json(ojson::array({user, {{"role", "assistant"}, {"content", "XYZ"}}}), o);
  if (c.is_ok()) {
    const std::string end = c->substr(c->find("XYZ") + 3);
    if (!end.empty() && r.ends_with(end)) r.resize(r.size() - end.size());
  }
  return r;
}

std::vector<ReplyEvent> parse_in_chunks(const ToolCallSyntax& s, const ToolSet& tools, const std::string& text, size_t chunk) {
  auto p = find_format(s.format)->parser(s, &tools, constrain::SpecialTexts{});
  std::vector<ReplyEvent> ev;
  for (size_t i = 0; i < text.size(); i += chunk) p->push(std::string_view(text).substr(i, chunk), ev);
  p->finish(ev);
  return ev;
}

// A template whose calls detection reads only in part ("limitation" in tool_syntax.json).
std::optional<std::string> limitation(const std::string& name) {
  if (more_expected().contains(name) && more_expected()[name].contains("limitation"))
    return more_expected()[name]["limitation"].get<std::string>();
  return std::nullopt;
}

TEST_P(Template, ParserReadsBackWhatTheTemplateWrites) {
  Loaded l = load(GetParam());
  const ToolCallSyntax s = detect_syntax(l.tmpl, l.options).syntax;
  if (s.format != "framed" && s.format != "tagged") GTEST_SKIP() << "no tool syntax of its own";
  if (auto why = limitation(GetParam())) GTEST_SKIP() << *why;
  std::vector<Call> calls = test_calls();
  if (s.max_calls == 1) calls.resize(1);
  auto text = rendered_reply(l, s, calls);
  ASSERT_TRUE(text) << "the template refused the calls";
  SCOPED_TRACE(::testing::PrintToString(*text));
  const ToolSet tools = test_tools();
  // A generation prompt that opens the reasoning (DeepSeek-R1): the model closes it first.
  if (s.starts_in_reasoning) text = "thought" + s.reasoning_close + "\n\n" + *text;
  const Reply whole = fold(parse_in_chunks(s, tools, *text, text->size()));
  ASSERT_EQ(whole.calls.size(), calls.size()) << ::testing::PrintToString(*text);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(whole.calls[i].name, calls[i].name);
    // (As JSON objects: a template that sorts the keys writes them in its order.)
    EXPECT_EQ(nlohmann::json::parse(whole.calls[i].arguments, nullptr, false), nlohmann::json(calls[i].args)) << whole.calls[i].arguments;
    EXPECT_FALSE(whole.calls[i].id.empty());
  }
  EXPECT_FALSE(whole.content.has_value()) << *whole.content;
  // Streamed in any chunking: the same calls, names before arguments.
  for (size_t chunk : {1, 2, 3, 5, 8, 13}) {
    const auto ev = parse_in_chunks(s, tools, *text, chunk);
    const Reply r = fold(ev);
    ASSERT_EQ(r.calls.size(), whole.calls.size()) << "chunk " << chunk;
    for (size_t i = 0; i < r.calls.size(); ++i) {
      EXPECT_EQ(r.calls[i].name, whole.calls[i].name);
      EXPECT_EQ(r.calls[i].arguments, whole.calls[i].arguments) << "chunk " << chunk;
      if (s.id_length > 0 && s.mid.find(kIdSlot) != std::string::npos) EXPECT_EQ(r.calls[i].id, whole.calls[i].id);
    }
    EXPECT_EQ(r.content, whole.content);
  }
  // Text before the call is content; with tools inactive the whole text is content.
  const Reply plain = fold(find_format(s.format)->parser(s, nullptr, {}) ? [&] {
    auto p = find_format(s.format)->parser(s, nullptr, constrain::SpecialTexts{});
    std::vector<ReplyEvent> ev;
    p->push("Let me check. " + *text, ev);
    p->finish(ev);
    return ev;
  }() : std::vector<ReplyEvent>{});
  EXPECT_TRUE(plain.calls.empty());
  const Reply lead = fold(parse_in_chunks(s, tools, "Let me check.\n" + *text, 4));
  EXPECT_EQ(lead.calls.size(), calls.size());
  // (A frame that opens with whitespace leaves it to the content.)
  const std::string opening = s.prefix + s.before;
  const bool ws_open = !opening.empty() && (opening[0] == ' ' || opening[0] == '\n');
  if (!ws_open && !s.starts_in_reasoning) EXPECT_EQ(lead.content.value_or(""), "Let me check.\n");
}

TEST_P(Template, GrammarAcceptsWhatTheTemplateWritesAndRefusesBadArguments) {
  Loaded l = load(GetParam());
  const ToolCallSyntax s = detect_syntax(l.tmpl, l.options).syntax;
  if (s.format != "framed" && s.format != "tagged") GTEST_SKIP() << "no tool syntax of its own";
  if (auto why = limitation(GetParam())) GTEST_SKIP() << *why;
  if (more_expected().contains(GetParam()) && more_expected()[GetParam()].contains("grammar_limitation"))
    GTEST_SKIP() << more_expected()[GetParam()]["grammar_limitation"].get<std::string>();
  std::vector<Call> calls = test_calls();
  if (s.max_calls == 1) calls.resize(1);
  const ToolSet tools = test_tools();
  const ReplyGrammar rg = framed_grammar(s, tools, constrain::SpecialTexts{});
  ASSERT_TRUE(rg.framed);
  auto g = constrain::compile_framed_json(*rg.framed);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  // Constrained from the first token: a prompt that opened the reasoning has it closed first.
  const std::string lead = s.starts_in_reasoning ? s.reasoning_close + "\n\n" : "";
  const auto accepts = [&](const std::string& text) {
    constrain::Matcher m(*g);
    return m.advance(lead + text) && m.accepting();
  };
  const auto text = rendered_reply(l, s, calls);
  ASSERT_TRUE(text);
  // A template's id slot holds the template's own ids (ours are 9 letters and digits too).
  EXPECT_TRUE(accepts(*text)) << ::testing::PrintToString(*text);
  std::vector<Call> bad = calls;
  bad[0].args["unit"] = "kelvin";
  EXPECT_FALSE(accepts(*rendered_reply(l, s, bad)));
  bad = calls;
  bad[0].name = "get_weather2";
  EXPECT_FALSE(accepts(*rendered_reply(l, s, bad)));
  bad = calls;
  bad[0].args.erase("city");
  EXPECT_FALSE(accepts(*rendered_reply(l, s, bad)));
  // parallel_tool_calls false: one call only.
  if (calls.size() > 1) {
    ToolSet one = tools;
    one.parallel = false;
    auto g1 = constrain::compile_framed_json(*framed_grammar(s, one, {}).framed);
    ASSERT_TRUE(g1.is_ok());
    constrain::Matcher m(*g1);
    EXPECT_FALSE(m.advance(lead + *text) && m.accepting());
  }
  // A named choice allows that function only.
  ToolSet named = tools;
  named.choice = ToolSet::Choice::kNamed;
  named.named = "search-docs";
  auto gn = constrain::compile_framed_json(*framed_grammar(s, named, {}).framed);
  ASSERT_TRUE(gn.is_ok());
  constrain::Matcher mn(*gn);
  EXPECT_FALSE(mn.advance(lead + *rendered_reply(l, s, {calls[0]})) && mn.accepting());
}

TEST(ToolCallSyntax, StoredFormRefusesWhatItCannotHonour) {
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "xml"})")).is_ok());
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "framed"})")).is_ok());  // nothing starts a call
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "colour": 1})")).is_ok());
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "mid": "\u0001"})")).is_ok());
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"reasoning_open": "<think>"})")).is_ok());
  EXPECT_TRUE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "mid": " "})")).is_ok());
  // A notation for the arguments: framed calls only, and sorted only with a quote.
  EXPECT_TRUE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "args_quote": "'", "args_sorted": true})")).is_ok());
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "args_sorted": true})")).is_ok());
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "generic_json", "args_quote": "'"})")).is_ok());
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "args_quote": 1})")).is_ok());
  EXPECT_FALSE(parse_tool_call_format("/no/such/file.json").is_ok());
  EXPECT_TRUE(parse_tool_call_format("generic_json").is_ok());
}

// The stored form of a tagged format: its three argument frames come together, with it only.
TEST(ToolCallSyntax, TaggedFormatNeedsItsArgumentFrames) {
  const ojson ok = ojson::parse(R"({"format": "tagged", "before": "<tool_call>\n<function=", "mid": ">\n",
      "after": "</function>\n</tool_call>", "param_before": "<parameter=", "param_mid": ">\n", "param_after": "\n</parameter>\n"})");
  ASSERT_TRUE(syntax_from_json(ok).is_ok());
  EXPECT_EQ(to_json(*syntax_from_json(ok)), ok);
  ojson missing = ok;
  missing.erase("param_after");
  EXPECT_FALSE(syntax_from_json(missing).is_ok());
  ojson framed = ok;
  framed["format"] = "framed";
  EXPECT_FALSE(syntax_from_json(framed).is_ok());
  ojson slot = ok;
  slot["separator"] = "\x01";  // an id slot outside a call's own frame
  EXPECT_FALSE(syntax_from_json(slot).is_ok());
}

// Python's str() of a value, read back as JSON; anything else is not a literal.
TEST(PythonLiteral, ReadsWhatStrPrints) {
  EXPECT_EQ(*python_literal(R"( {'k': 1, "b": [True, None, -1.5e3, 'it\'s \u00e9\n'], 't': (1, 2,)} )"),
            ojson::parse(R"({"k": 1, "b": [true, null, -1500.0, "it's \u00e9\n"], "t": [1, 2]})"));
  EXPECT_EQ(*python_literal("[]"), ojson::array());
  EXPECT_EQ(*python_literal("'x'"), ojson("x"));
  for (const char* bad : {"", "{'a': }", "[1,", "abc", "{1: 2}", "'open", "[1] 2", "Truth"})
    EXPECT_FALSE(python_literal(bad).has_value()) << bad;
}

// A tagged string argument is any text that does not hold its closing tag (so that it cannot
// run into the next argument), at most maxLength characters where the schema says so; an enum
// is one of its values; other values are JSON of their schema.
TEST(TaggedGrammar, StringsStopAtTheirClosingTagAndKeepTheirBounds) {
  ToolCallSyntax s;
  s.format = "tagged", s.before = "<call=", s.mid = ">", s.after = "</call>";
  s.param_before = "<p=", s.param_mid = ">", s.param_after = "</p>";
  ToolSet tools;
  tools.tools.push_back({"f", ojson::parse(R"({"type": "object", "properties": {"text": {"type": "string"},
      "short": {"type": "string", "maxLength": 3}, "mode": {"enum": ["a", "b"]}, "n": {"type": "integer", "minimum": 0}},
      "required": ["text"]})")});
  tools.choice = ToolSet::Choice::kRequired;
  auto g = constrain::compile_framed_json(*framed_grammar(s, tools, {}).framed);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const auto accepts = [&](const std::string& text) {
    constrain::Matcher m(*g);
    return m.advance(text) && m.accepting();
  };
  EXPECT_TRUE(accepts("<call=f><p=text>a < b </ p <p</p></call>"));
  EXPECT_TRUE(accepts("<call=f><p=text></p><p=short>\xC3\xA9\xC3\xA9x</p><p=mode>b</p><p=n>12</p></call>"));
  EXPECT_FALSE(accepts("<call=f><p=text>x</p>y</p></call>"));           // the text holds its closing tag
  EXPECT_FALSE(accepts("<call=f><p=text>x</p><p=short>abcd</p></call>"));  // 4 characters
  EXPECT_FALSE(accepts("<call=f><p=text>x</p><p=mode>c</p></call>"));
  EXPECT_FALSE(accepts("<call=f><p=text>x</p><p=n>-1</p></call>"));
  EXPECT_FALSE(accepts("<call=f><p=short>ab</p></call>"));                // `text` is required
  EXPECT_FALSE(accepts("<call=f><p=mode>a</p><p=text>x</p></call>"));     // the schema's order

  // Read back: strings escaped as they stream, the integer as JSON, Python's literals as JSON.
  const std::string reply = "<call=f><p=text>say \"hi\"\n\\ \xC3\xA9</p><p=n>12</p></call>";
  for (size_t chunk : {1, 2, 5, 100}) {
    const Reply r = fold(parse_in_chunks(s, tools, reply, chunk));
    ASSERT_EQ(r.calls.size(), 1u) << chunk;
    EXPECT_EQ(ojson::parse(r.calls[0].arguments), ojson::parse(R"({"text": "say \"hi\"\n\\ \u00e9", "n": 12})")) << chunk;
  }
  tools.tools[0].parameters["properties"]["n"] = {{"type", "array"}};
  const Reply py = fold(parse_in_chunks(s, tools, "<call=f><p=text>x</p><p=n>[{'k': True}]</p></call>", 3));
  ASSERT_EQ(py.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(py.calls[0].arguments), ojson::parse(R"({"text": "x", "n": [{"k": true}]})"));
}

// A string nested in a tagged value that is not a string may hold the tag that closes the value
// (the grammar lets it: it is JSON of the value's schema), so the parser ends the value at the
// first closing tag outside its strings: JSON's, Python literals' (either quote), escapes
// included. A quote inside a word of free text opens nothing.
TEST(TaggedGrammar, ANonStringValueEndsAtItsClosingTagOutsideItsStrings) {
  ToolCallSyntax s;
  s.format = "tagged", s.before = "<call=", s.mid = ">", s.after = "</call>";
  s.param_before = "<p=", s.param_mid = ">", s.param_after = "</p>";
  ToolSet tools;
  tools.tools.push_back({"f", ojson::parse(R"({"type": "object", "properties": {"o": {"type": "object",
      "properties": {"t": {"type": "string"}}, "required": ["t"]}, "n": {"type": "integer"}}, "required": ["o"]})")});
  tools.choice = ToolSet::Choice::kRequired;
  auto g = constrain::compile_framed_json(*framed_grammar(s, tools, {}).framed);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const std::string reply = R"(<call=f><p=o>{"t": "a</p>b \"</p>\" c"}</p><p=n>3</p></call>)";
  constrain::Matcher m(*g);
  EXPECT_TRUE(m.advance(reply) && m.accepting()) << "the grammar writes it";
  for (size_t chunk : {1, 2, 3, 7, 100}) {
    const Reply r = fold(parse_in_chunks(s, tools, reply, chunk));
    ASSERT_EQ(r.calls.size(), 1u) << chunk;
    EXPECT_EQ(ojson::parse(r.calls[0].arguments), ojson::parse(R"({"o": {"t": "a</p>b \"</p>\" c"}, "n": 3})")) << chunk;
  }
  // Python's str() of the value: single-quoted strings, a double-quoted one holding a quote.
  const Reply py = fold(parse_in_chunks(s, tools, R"(<call=f><p=o>{'t': 'x</p>\'y', 'u': "it's </p>"}</p></call>)", 2));
  ASSERT_EQ(py.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(py.calls[0].arguments), ojson::parse(R"({"o": {"t": "x</p>'y", "u": "it's </p>"}})"));
  // Free text where a value was due: the apostrophe opens no string, the value ends at its tag.
  const Reply text = fold(parse_in_chunks(s, tools, "<call=f><p=n>it's 3</p><p=o>{}</p></call>", 4));
  ASSERT_EQ(text.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(text.calls[0].arguments), ojson::parse(R"({"n": "it's 3", "o": {}})"));
}

// A frame that marks a value's kind (DSML's string="true" / "false"): non-string values take
// param_mid_json in the grammar, and the parser reads the mark, not the schema.
TEST(TaggedGrammar, AFrameThatMarksTheValuesKindHasAMidForEach) {
  ToolCallSyntax s;
  s.format = "tagged", s.before = "<call=", s.mid = ">", s.after = "</call>";
  s.param_before = "<p=", s.param_mid = " s>", s.param_mid_json = " j>", s.param_after = "</p>";
  ASSERT_TRUE(syntax_from_json(to_json(s)).is_ok());
  ToolSet tools;
  tools.tools.push_back({"f", ojson::parse(R"({"type": "object", "properties": {"text": {"type": "string"},
      "n": {"type": "integer"}}, "required": ["text", "n"]})")});
  tools.choice = ToolSet::Choice::kRequired;
  auto g = constrain::compile_framed_json(*framed_grammar(s, tools, {}).framed);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const auto accepts = [&](const std::string& text) {
    constrain::Matcher m(*g);
    return m.advance(text) && m.accepting();
  };
  EXPECT_TRUE(accepts("<call=f><p=text s>12</p><p=n j>12</p></call>"));
  EXPECT_FALSE(accepts("<call=f><p=text s>12</p><p=n s>12</p></call>"));
  EXPECT_FALSE(accepts("<call=f><p=text j>12</p><p=n j>12</p></call>"));
  const Reply r = fold(parse_in_chunks(s, tools, "<call=f><p=text s>12</p><p=n j>12</p></call>", 2));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(r.calls[0].arguments), ojson::parse(R"({"text": "12", "n": 12})"));
}

// Arguments in a template's own notation (strings between a quote, bare keys, no spaces): a
// made-up notation, not any template's, so that what is tested is the rule and not a fixture.
ToolCallSyntax notation_syntax(bool sorted) {
  ToolCallSyntax s;
  s.format = "framed", s.before = "<<call ", s.after = ">>", s.separator = ";";
  s.args_quote = "~'", s.args_sorted = sorted;
  return s;
}
ToolSet notation_tools() {
  ToolSet tools;
  tools.tools.push_back({"f", ojson::parse(R"({"type": "object", "properties": {"zeta": {"type": "string", "maxLength": 3},
      "Alpha": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer", "minimum": 0}},
      "required": ["k"], "additionalProperties": false}}, "Mode": {"enum": ["on", "off", 2]},
      "id": {"type": "string", "pattern": "^[a-z]+\"[0-9]$"}, "note": {"type": "string", "pattern": "^.+$"}},
      "required": ["zeta"]})")});
  tools.choice = ToolSet::Choice::kRequired;
  return tools;
}

TEST(NotationGrammar, ValuesAreWrittenInTheNotationAndHeldToTheirSchema) {
  for (bool sorted : {false, true}) {
    const ToolCallSyntax s = notation_syntax(sorted);
    ASSERT_TRUE(syntax_from_json(to_json(s)).is_ok());
    auto g = constrain::compile_framed_json(*framed_grammar(s, notation_tools(), {}).framed);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    const auto accepts = [&](const std::string& text) {
      constrain::Matcher m(*g);
      return m.advance(text) && m.accepting();
    };
    const constrain::ValueNotation n{.quote = "~'", .sorted_keys = sorted};
    const auto call = [&](const ojson& args) { return "<<call f" + constrain::notation_text(args, n) + ">>"; };
    // dictsort's order is case-insensitive: Alpha, id, Mode, zeta (ASCII order would put Mode before id).
    const ojson good = ojson::parse(R"({"zeta": "a{b", "Alpha": [{"k": 0}, {"k": 12}], "Mode": "off", "id": "ab\"7"})");
    EXPECT_EQ(call(good), sorted ? "<<call f{Alpha:[{k:0},{k:12}],id:~'ab\"7~',Mode:~'off~',zeta:~'a{b~'}>>"
                                 : "<<call f{zeta:~'a{b~',Alpha:[{k:0},{k:12}],Mode:~'off~',id:~'ab\"7~'}>>");
    EXPECT_TRUE(accepts(call(good)));
    EXPECT_TRUE(accepts(call(good) + ";" + call({{"zeta", ""}, {"Mode", 2}})));
    // Keys beyond the declared ones follow them, in either order (the model writes them last).
    EXPECT_TRUE(accepts("<<call f{zeta:~'\xC3\xA9\xC3\xA9x~',extra_1:{deep:[null,true,-1.5,~'q~']}}>>"));
    EXPECT_FALSE(accepts("<<call f{zeta:~'x~',zeta_:1,Mode:2}>>"));
    // The raw text of a string: no escapes, any quote but the notation's own.
    EXPECT_TRUE(accepts("<<call f{zeta:~'\\n\"~'}>>"));
    EXPECT_FALSE(accepts(call({{"zeta", "abcd"}})));                    // maxLength 3
    EXPECT_FALSE(accepts(call({{"Mode", "on"}})));                      // zeta is required
    EXPECT_FALSE(accepts(call({{"zeta", "a"}, {"Mode", "2"}})));        // 2 is a number, not a string
    EXPECT_FALSE(accepts(call({{"zeta", "a"}, {"Alpha", ojson::array({{{"k", -1}}})}})));
    EXPECT_FALSE(accepts(call({{"zeta", "a"}, {"Alpha", ojson::array({{{"k", 1}, {"j", 1}}})}})));
    EXPECT_FALSE(accepts(call({{"zeta", "a"}, {"id", "ab7"}})));        // the pattern, on the raw text
    EXPECT_FALSE(accepts("<<call f{zeta:~'a~',zeta:~'b~'}>>"));          // a declared key is no extra one
    EXPECT_FALSE(accepts("<<call f{\"zeta\": ~'a~'}>>"));               // JSON's keys and spaces are not the notation's
    EXPECT_FALSE(accepts("<<call f{zeta:\"a\"}>>"));
    EXPECT_FALSE(accepts("<<call f{zeta:~'~'b~'}>>"));                  // the quote ends the string
    EXPECT_FALSE(accepts("<<call f{zeta:~'a~',more:~'x~'y~'}>>"));
    EXPECT_TRUE(accepts("<<call f{zeta:~'b'~',more:~'x~y'~'}>>"));      // its first character alone does not,
    EXPECT_FALSE(accepts("<<call f{zeta:~'~b~'}>>"));                   // but where a string is bounded
    EXPECT_FALSE(accepts(call({{"zeta", "a"}, {"note", "a~b"}})));      // or patterned it is left out
    EXPECT_TRUE(accepts(call({{"zeta", "a"}, {"note", "a\"b\\"}})));
    EXPECT_EQ(accepts("<<call f{Mode:~'on~',zeta:~'a~'}>>"), sorted);    // the notation's order, not another
    EXPECT_EQ(accepts("<<call f{zeta:~'a~',Mode:~'on~'}>>"), !sorted);
  }
}

// A template that prints a tagged value that is not a string with Python's str() has it
// written and read so: True/False/None, strings in repr's quotes and escapes, ", " and ": ".
TEST(NotationGrammar, PythonValuesAreWrittenAsStrPrintsThemAndReadBack) {
  const constrain::ValueNotation py{.python = true};
  const ojson v = ojson::parse(R"({"a": [1, true, null, "x'y", "q\"r'", "t\tn\n\\"], "b": {"c": -2.5}})");
  EXPECT_EQ(constrain::notation_text(v, py), R"({'a': [1, True, None, "x'y", 'q"r\'', 't\tn\n\\'], 'b': {'c': -2.5}})");
  EXPECT_EQ(python_literal(constrain::notation_text(v, py)), v);  // what the parser reads back

  ToolCallSyntax s;
  s.format = "tagged", s.before = "<call=", s.mid = ">", s.after = "</call>";
  s.param_before = "<p=", s.param_mid = ">", s.param_after = "</p>", s.python_values = true;
  ASSERT_TRUE(syntax_from_json(to_json(s)).is_ok());
  ToolSet tools;
  tools.tools.push_back({"f", ojson::parse(R"({"type": "object", "properties": {
      "cfg": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 4},
              "code": {"type": "string", "pattern": "^[a-z']+$"}}, "required": ["name"], "additionalProperties": false},
      "flags": {"type": "array", "items": {"type": "boolean"}}, "none": {"type": "null"}, "open": {"type": "object"},
      "meta": {"type": "object", "properties": {"id": {"type": "integer"}}},
      "text": {"type": "string"}}, "required": ["cfg"]})")});
  tools.choice = ToolSet::Choice::kRequired;
  auto g = constrain::compile_framed_json(*framed_grammar(s, tools, {}).framed);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const auto accepts = [&](const std::string& text) {
    constrain::Matcher m(*g);
    return m.advance(text) && m.accepting();
  };
  EXPECT_TRUE(accepts(R"(<call=f><p=cfg>{'name': 'it\'s'}</p><p=flags>[True, False]</p><p=none>None</p></call>)"));
  EXPECT_TRUE(accepts(R"(<call=f><p=cfg>{'name': 'a"b', 'code': 'it\'s'}</p><p=open>{'k': [1, 'v', None]}</p><p=text>a 'b'</p></call>)"));
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{"name": "a"}</p></call>)"));                // JSON is not what str() prints
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name':'a'}</p></call>)"));                 // nor without its spaces
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'a'}</p><p=flags>[true]</p></call>)"));
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'a'}</p><p=none>null</p></call>)"));
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'abcde'}</p></call>)"));           // maxLength 4
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'a', 'code': 'A'}</p></call>)"));   // the pattern
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'a', 'x': 1}</p></call>)"));        // no other keys
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'a'b'}</p></call>)"));              // the quote ends the string
  EXPECT_TRUE(accepts(R"(<call=f><p=cfg>{'name': 'a'}</p><p=meta>{'id': 1, 'idx': 'i', 'i': 2}</p></call>)"));
  EXPECT_FALSE(accepts(R"(<call=f><p=cfg>{'name': 'a'}</p><p=meta>{'id': 1, 'id': 2}</p></call>)"));  // a key once
  // Its calls read back as JSON.
  const Reply r = fold(parse_in_chunks(s, tools, R"(<call=f><p=cfg>{'name': 'it\'s', 'code': 'x'}</p><p=flags>[True]</p><p=none>None</p></call>)", 3));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(r.calls[0].arguments),
            ojson::parse(R"({"cfg": {"name": "it's", "code": "x"}, "flags": [true], "none": null})"));
  // python_values belongs to the tagged format.
  EXPECT_FALSE(syntax_from_json(ojson::parse(R"({"format": "framed", "before": "<c>", "python_values": true})")).is_ok());
}

// The reader turns the notation into JSON as it streams: any chunking gives the same JSON,
// Python's literals read as JSON's, and a reply cut short inside the value still closes.
TEST(NotationReader, StreamsTheNotationAsJson) {
  const std::string quote = "~'";
  const constrain::ValueNotation n{.quote = quote};
  const ojson v = ojson::parse(R"({"a": "x \"y\" \\ \n \u00e9\u4e2d", "b": [1, -2.5e-3, true, false, null, {}, []],
      "c": {"d": {"e": "~"}, "f": ""}})");
  const std::string text = constrain::notation_text(v, n);
  for (size_t chunk : std::vector<size_t>{1, 2, 3, 7, text.size()}) {
    NotationReader r(quote);
    std::string json, held;
    for (size_t i = 0; i < text.size(); i += chunk) {
      held += text.substr(i, chunk);
      held.erase(0, r.read(held, false, json));
    }
    EXPECT_TRUE(r.done()) << chunk;
    EXPECT_TRUE(held.empty()) << chunk;
    EXPECT_EQ(ojson::parse(json), v) << json;
  }
  const auto whole = [&](const std::string& t) {
    NotationReader r(quote);
    std::string json;
    r.read(t, true, json);
    if (!r.done()) r.close(json);
    return ojson::parse(json, nullptr, false);
  };
  EXPECT_EQ(whole("{a:True,b:None,c:False,d:2}"), ojson::parse(R"({"a": true, "b": null, "c": false, "d": 2})"));
  EXPECT_EQ(whole("{a:word}"), ojson::parse(R"({"a": "word"})"));  // not a literal: its text
  EXPECT_EQ(whole("{~'quoted key~':1}"), ojson::parse(R"({"quoted key": 1})"));
  EXPECT_EQ(whole("{a:[1,{b:~'cut"), ojson::parse(R"({"a": [1, {"b": "cut"}]})"));
  EXPECT_EQ(whole("{a:[1,"), ojson::parse(R"({"a": [1]})"));
  EXPECT_EQ(whole("{a:"), ojson::parse(R"({"a": null})"));
  EXPECT_EQ(whole("{a:1,"), ojson::parse(R"({"a": 1})"));
}

// A template that writes arguments in a notation of its own (here a made-up one) is read as
// such; one whose rendering of a richer value differs from every notation is not.
TEST(NotationDetection, ATemplatesOwnNotationIsReadFromItsRendering) {
  const std::string notation_macro = R"({%- macro arg(v) -%}
{%- if v is string -%}<q>{{ v }}<q>{%- elif v is boolean -%}{{ 'true' if v else 'false' }}
{%- elif v is mapping -%}{ {%- for k, x in v.items() -%}{{ ',' if not loop.first }}{{ k }}:{{ arg(x) }}{%- endfor -%} }
{%- elif v is sequence -%}[{%- for x in v -%}{{ ',' if not loop.first }}{{ arg(x) }}{%- endfor -%}]
{%- else -%}{{ v }}{%- endif -%}
{%- endmacro -%})";
  const std::string body = R"(
{%- for m in messages -%}
{%- if m.role == 'user' -%}U: {{ m.content }}
{% elif m.role == 'assistant' -%}A: {{ m.content or '' }}
{%- for c in m.tool_calls or [] -%}[CALL {{ c.function.name }} {{ arg(c.function.arguments) }}]{%- endfor -%}
<end>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}A: {% endif -%})";
  auto t = chat::ChatTemplate::parse(notation_macro + body);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const Detection d = detect_syntax(*t, chat::RenderOptions{});
  EXPECT_EQ(d.syntax.format, "framed") << d.why;
  EXPECT_EQ(d.syntax.before, "[CALL ");
  EXPECT_EQ(d.syntax.mid, " ");
  EXPECT_EQ(d.syntax.after, "]");
  EXPECT_EQ(d.syntax.args_quote, "<q>");
  EXPECT_FALSE(d.syntax.args_sorted);
  // Its calls read back through the parser.
  const Reply r = fold(parse_in_chunks(d.syntax, test_tools(), "A: ok[CALL get_weather {city:<q>Oslo, \"N\"<q>,unit:<q>celsius<q>}]", 4));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(r.calls[0].arguments), ojson::parse(R"({"city": "Oslo, \"N\"", "unit": "celsius"})"));

  // The same notation with its keys in dictsort's order.
  std::string sorted_macro = notation_macro;
  sorted_macro.replace(sorted_macro.find("v.items()"), 9, "v|dictsort");
  auto t3 = chat::ChatTemplate::parse(sorted_macro + body);
  ASSERT_TRUE(t3.is_ok());
  const Detection d3 = detect_syntax(*t3, chat::RenderOptions{});
  EXPECT_EQ(d3.syntax.args_quote, "<q>") << d3.why;
  EXPECT_TRUE(d3.syntax.args_sorted);

  // A notation that writes numbers as words is none the notation knows: the generic format.
  std::string odd = notation_macro;
  odd.replace(odd.find("{{ v }}"), 7, "num({{ v }})");
  auto t2 = chat::ChatTemplate::parse(odd + body);
  ASSERT_TRUE(t2.is_ok());
  const Detection d2 = detect_syntax(*t2, chat::RenderOptions{});
  EXPECT_EQ(d2.syntax.format, "generic_json");
  EXPECT_EQ(d2.why, "the template writes a call's arguments in a form that is not JSON");
}

// A call counter the template writes before each call ("n": "0", then "1"): read as an id slot,
// so a reply with a third call ("2") is accepted and read back.
TEST(CounterDetection, ACallCounterBeforeEachCallIsAnIdSlot) {
  auto t = chat::ChatTemplate::parse(R"(
{%- for m in messages -%}
{%- if m.role == 'user' -%}U: {{ m.content }}
{% elif m.role == 'assistant' -%}A: {{ m.content or '' }}
{%- if m.tool_calls -%}<calls>[{%- for c in m.tool_calls -%}{{ ', ' if not loop.first }}{"n": "{{ loop.index0 }}", "name": "{{ c.function.name }}", "args": {{ c.function.arguments | tojson }}}{%- endfor -%}]</calls>{%- endif -%}
<end>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}A: {% endif -%})");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  const Detection d = detect_syntax(*t, chat::RenderOptions{});
  ASSERT_EQ(d.syntax.format, "framed") << d.why;
  EXPECT_EQ(d.syntax.prefix, "<calls>[{\"n\": \"");
  EXPECT_EQ(d.syntax.before, "\x01\", \"name\": \"");
  EXPECT_EQ(d.syntax.separator, ", {\"n\": \"");
  EXPECT_EQ(d.syntax.id_length, 1);
  const std::string three = R"(<calls>[{"n": "0", "name": "get_weather", "args": {"city": "Oslo", "unit": "celsius"}}, )"
                            R"({"n": "1", "name": "get_weather", "args": {"city": "Rome", "unit": "celsius"}}, )"
                            R"({"n": "2", "name": "get_weather", "args": {"city": "Nice", "unit": "fahrenheit"}}]</calls>)";
  const ToolSet tools = test_tools();
  auto g = constrain::compile_framed_json(*framed_grammar(d.syntax, tools, {}).framed);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  constrain::Matcher m(*g);
  EXPECT_TRUE(m.advance(three) && m.accepting());
  const Reply r = fold(parse_in_chunks(d.syntax, tools, three, 5));
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(ojson::parse(r.calls[2].arguments), ojson::parse(R"({"city": "Nice", "unit": "fahrenheit"})"));
}

TEST(ReplyParser, ReasoningIsNotContentAndACallInsideItIsNotACall) {
  ToolCallSyntax s;
  s.format = "framed", s.before = "<tool_call>\n{\"name\": \"", s.mid = "\", \"arguments\": ", s.after = "}\n</tool_call>";
  s.separator = "\n", s.reasoning_open = "<think>", s.reasoning_close = "</think>";
  const ToolSet tools = test_tools();
  const std::string text =
      "<think>\nI could write <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"X\"}}\n</tool_call> here.\n</think>\n\n"
      "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
  for (size_t chunk : {1, 4, 1000}) {
    const Reply r = fold(parse_in_chunks(s, tools, text, chunk));
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(ojson::parse(r.calls[0].arguments), ojson::parse(R"({"city": "Oslo"})"));
    ASSERT_TRUE(r.reasoning);
    EXPECT_NE(r.reasoning->find("I could write <tool_call>"), std::string::npos);
    EXPECT_EQ(r.content.value_or(""), "Sure.\n");
  }
  // Cut short inside the arguments (max_tokens): the call keeps what it has.
  const Reply cut = fold(parse_in_chunks(s, tools, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"ci", 3));
  ASSERT_EQ(cut.calls.size(), 1u);
  EXPECT_EQ(cut.calls[0].arguments, "{\"ci");
  // Cut short inside the opening: no call, and the template's syntax is not content.
  const Reply opening = fold(parse_in_chunks(s, tools, "Hm. <tool_call>\n{\"name\": \"get_weather\", \"arg", 3));
  EXPECT_TRUE(opening.calls.empty());
  EXPECT_EQ(opening.content.value_or(""), "Hm. ");
  // Not a call after all: the text is content, nothing lost.
  const Reply notcall = fold(parse_in_chunks(s, tools, "<tool_call>\n{\"name\": \"a b\"}", 2));
  EXPECT_TRUE(notcall.calls.empty());
  EXPECT_EQ(notcall.content.value_or(""), "<tool_call>\n{\"name\": \"a b\"}");
}

TEST(ReplyParser, SpecialTokensAreMarkedAndUnknownOnesDropped) {
  ToolCallSyntax s;
  s.format = "framed", s.before = "[TOOL_CALLS]", s.mid = "[ARGS]";
  const constrain::SpecialTexts sp({"[TOOL_CALLS]", "[ARGS]", "</s>", "<unk>"});
  auto p = framed_parser(s, nullptr, sp);
  ToolSet tools = test_tools();
  auto pc = framed_parser(s, &tools, sp);
  std::vector<ReplyEvent> ev;
  // An ordinary-token spelling of [TOOL_CALLS] is text; the special token starts a call.
  pc->push("see [TOOL_CALLS] " + constrain::mark_special("<unk>") + "ok", ev);
  pc->push(constrain::mark_special("[TOOL_CALLS]") + "get_weather" + constrain::mark_special("[ARGS]") + "{\"city\": \"A\"}", ev);
  pc->finish(ev);
  const Reply r = fold(ev);
  EXPECT_EQ(r.content.value_or(""), "see [TOOL_CALLS] ok");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].id.size(), 29u);  // "call_" + 24: no id slot in this syntax
}

TEST(ReplyParser, GenericFormatReadsTheWholeObject) {
  ToolCallSyntax s;
  const ToolSet tools = test_tools();
  const Reply r = fold(parse_in_chunks(s, tools, R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]})", 5));
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(ojson::parse(r.calls[0].arguments), ojson::parse(R"({"city": "Rome"})"));
  EXPECT_FALSE(r.content);
  EXPECT_EQ(fold(parse_in_chunks(s, tools, R"({"response": "hello"})", 3)).content.value_or(""), "hello");
  EXPECT_EQ(fold(parse_in_chunks(s, tools, R"({"respo)", 3)).content.value_or(""), R"({"respo)");
}

}  // namespace
}  // namespace og::toolcall
