// og::chat against Jinja2: real HF chat templates must render byte for byte what
// transformers' apply_chat_template renders (tests/data/chat/expected.json, written by
// scripts/render_chat_oracle.py), and every error must be a Status, never a crash.
#include "chat/chat_template.h"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

namespace og::chat {
namespace {

const nlohmann::ordered_json& oracle() {
  static const nlohmann::ordered_json j = [] {
    std::ifstream f(std::string(OG_TEST_DATA) + "/chat/expected.json");
    return nlohmann::ordered_json::parse(f);
  }();
  return j;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The variables transformers would pass for this template and conversation.
RenderOptions options_for(const nlohmann::ordered_json& tmpl, const nlohmann::ordered_json& conv, bool agp) {
  RenderOptions o;
  o.add_generation_prompt = agp;
  for (const auto& [k, v] : tmpl["special_tokens"].items()) {
    if (k == "bos_token") o.bos_token = v.get<std::string>();
    else if (k == "eos_token") o.eos_token = v.get<std::string>();
    else o.extra_context[k] = v;
  }
  for (const auto& [k, v] : oracle()["common_extra"].items()) o.extra_context[k] = v;
  std::tm now{};
  strptime(oracle()["fixed_now"].get<std::string>().c_str(), "%Y-%m-%dT%H:%M:%S", &now);
  o.now = now;
  if (conv.contains("extra")) {
    for (const auto& [k, v] : conv["extra"].items()) o.extra_context[k] = v;
  }
  return o;
}

class RealTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTemplate, RendersLikeJinja2ForEveryConversation) {
  const std::string name = GetParam();
  const auto& tmpl = oracle()["templates"][name];
  auto t = ChatTemplate::parse(read_file(std::string(OG_TEST_DATA) + "/chat/" + tmpl["file"].get<std::string>()));
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  int checked = 0;
  for (const auto& c : oracle()["cases"]) {
    if (c["template"] != name) continue;
    const auto& conv = oracle()["conversations"][c["conversation"].get<std::string>()];
    const bool agp = c["add_generation_prompt"].get<bool>();
    SCOPED_TRACE(name + " / " + c["conversation"].get<std::string>() + (agp ? " / generation prompt" : ""));
    auto r = t->render_json(conv["messages"], options_for(tmpl, conv, agp));
    ++checked;
    if (c.contains("output")) {
      ASSERT_TRUE(r.is_ok()) << r.status().message();
      EXPECT_EQ(*r, c["output"].get<std::string>());
    } else {
      ASSERT_FALSE(r.is_ok()) << "Jinja2 raised '" << c["error"].get<std::string>() << "', og::chat rendered:\n" << *r;
      if (c["raised"].get<bool>()) {  // raise_exception(): the template's own message comes through
        EXPECT_NE(r.status().message().find(c["error"].get<std::string>()), std::string::npos) << r.status().message();
      }
    }
  }
  EXPECT_GE(checked, 20);
}

// Every oracle entry (and OracleCoversEveryTemplateFile: every template file).
std::vector<std::string> oracle_names() {
  std::vector<std::string> names;
  for (const auto& [name, t] : oracle()["templates"].items()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Oracle, RealTemplate, ::testing::ValuesIn(oracle_names()),
                         [](const auto& info) { return info.param; });

// One rule per snippet: operators, str()/repr(), filters, tests, scoping, whitespace.
TEST(Snippets, RenderLikeJinja2) {
  RenderOptions o;
  o.extra_context = oracle()["snippet_context"];
  int checked = 0;
  for (const auto& c : oracle()["snippets"]) {
    const std::string source = c["source"].get<std::string>();
    SCOPED_TRACE(source);
    auto t = ChatTemplate::parse(source);
    Result<std::string> r = t.is_ok() ? t->render_json(nlohmann::ordered_json::array(), o) : Result<std::string>(t.status());
    ++checked;
    if (c.contains("output")) {
      ASSERT_TRUE(r.is_ok()) << r.status().message();
      EXPECT_EQ(*r, c["output"].get<std::string>());
      continue;
    }
    ASSERT_FALSE(r.is_ok()) << "Jinja2 raised '" << c["error"].get<std::string>() << "', og::chat rendered:\n" << *r;
    if (c["raised"].get<bool>()) {
      EXPECT_NE(r.status().message().find(c["error"].get<std::string>()), std::string::npos) << r.status().message();
    }
  }
  EXPECT_GE(checked, 80);
}

TEST(RealTemplate, OracleCoversEveryTemplateFile) {
  // Every .jinja file beside expected.json has an oracle entry (else it would be tested by
  // nothing), and every entry names a file that is there.
  std::set<std::string> files, entries;
  for (const auto& e : std::filesystem::directory_iterator(std::string(OG_TEST_DATA) + "/chat"))
    if (e.path().extension() == ".jinja") files.insert(e.path().filename().string());
  for (const auto& t : oracle()["templates"]) entries.insert(t["file"].get<std::string>());
  std::string missing, stale;
  for (const std::string& f : files)
    if (!entries.contains(f)) missing += " " + f;
  for (const std::string& f : entries)
    if (!files.contains(f)) stale += " " + f;
  EXPECT_TRUE(missing.empty()) << "template files with no entry in expected.json (run the oracle script):" << missing;
  EXPECT_TRUE(stale.empty()) << "expected.json entries with no template file:" << stale;
  EXPECT_EQ(oracle()["templates"].size(), 72u);  // the files committed today: 17, and 55 of llama.cpp's (lcpp_*)
}

// ---- the interpreter on its own ----

Result<std::string> render(std::string_view source, nlohmann::ordered_json vars = nlohmann::ordered_json::object()) {
  auto t = ChatTemplate::parse(source);
  if (!t.is_ok()) return t.status();
  RenderOptions o;
  o.extra_context = std::move(vars);
  return t->render({}, o);
}

std::string ok(std::string_view source, nlohmann::ordered_json vars = nlohmann::ordered_json::object()) {
  auto r = render(source, std::move(vars));
  EXPECT_TRUE(r.is_ok()) << source << ": " << r.status().message();
  return r.is_ok() ? *r : "<error>";
}

TEST(ChatTemplate, PassesMessagesGenerationPromptAndOnlyTheTokensThatAreSet) {
  auto t = ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}|{{ eos_token is defined }}|{{ tools is none }}");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  RenderOptions o;
  o.bos_token = "<s>";
  EXPECT_EQ(*t->render({{"user", "hi"}}, o), "<s><user>hi<assistant>|False|True");
  o.add_generation_prompt = false;
  o.eos_token = "</s>";
  EXPECT_EQ(*t->render({{"system", "s"}, {"user", "q"}}, o), "<s><system>s<user>q|True|True");
}

TEST(ChatTemplate, StrftimeNowFormatsTheFixedTime) {
  auto t = ChatTemplate::parse("{{ strftime_now('%d %b %Y') }} {{ strftime_now('%A %H:%M') }}");
  ASSERT_TRUE(t.is_ok());
  RenderOptions o;
  o.now = std::tm{};
  o.now->tm_year = 2024 - 1900;
  o.now->tm_mon = 6;
  o.now->tm_mday = 26;
  o.now->tm_hour = 9;
  EXPECT_EQ(*t->render({}, o), "26 Jul 2024 Friday 09:00");
}

TEST(Operators, FollowJinjaPrecedenceAndPythonArithmetic) {
  EXPECT_EQ(ok("{{ '<|user|>\n' + ' x ' | trim + '|' }}"), "<|user|>\nx|");  // filters bind tightest
  EXPECT_EQ(ok("{{ 1 ~ 2 * 3 }}"), "16");                                 // ~ is looser than *
  EXPECT_EQ(ok("{{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }}"), "-4 2 3.5 1024");
  EXPECT_EQ(ok("{{ 1 == 1.0 == true }} {{ [1, [2]] == [1, [2]] }} {{ 'b' in 'abc' }}"), "True True True");
  EXPECT_EQ(ok("{{ none or 'x' }} {{ 0 and 1 }} {{ 'y' if messages else 'n' }}"), "x 0 n");
  EXPECT_EQ(ok("{{ 'héllo'[::-1] }} {{ [1, 2, 3][-2:] }}"), "olléh [2, 3]");
}

TEST(Filters, MatchJinjaAndTransformersTojson) {
  EXPECT_EQ(ok("{{ x | tojson }}", {{"x", {{"a", "é\n"}, {"b", {1, 2.5}}}}}), "{\"a\": \"é\\n\", \"b\": [1, 2.5]}");
  EXPECT_EQ(ok("{{ x | tojson(indent=2) }}", {{"x", {{"a", nullptr}}}}), "{\n  \"a\": null\n}");
  EXPECT_EQ(ok("{{ m | selectattr('role', 'equalto', 'user') | map(attribute='c') | join(',') }}",
               {{"m", {{{"role", "user"}, {"c", "1"}}, {{"role", "bot"}, {"c", "2"}}, {{"role", "user"}, {"c", "3"}}}}}),
            "1,3");
  EXPECT_EQ(ok("{{ missing | default('d') }} {{ 'a b' | upper | replace(' ', '_') }} {{ [3, 1] | sort | first }}"), "d A_B 1");
}

TEST(Whitespace, TrimBlocksLstripBlocksAndDashMarkers) {
  EXPECT_EQ(ok("{% for i in [1, 2] %}\n    {% if i %}\n  {{ i }}\n    {% endif %}\n{% endfor %}\n"), "  1\n  2\n");
  EXPECT_EQ(ok("a  \n  {%- if true -%}  \n b {{- ' c ' -}} d\n{%- endif %}"), "ab c d");
  EXPECT_EQ(ok("  {{ 'x' }}\n  {%+ if true %}y{% endif %}\n{# c #}\nz\n"), "  x\n  yz");
}

TEST(Scoping, LoopSetsStayInTheIterationButNamespacesCarryState) {
  EXPECT_EQ(ok("{% set x = 'out' %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}"), "out");
  EXPECT_EQ(ok("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"), "6");
  EXPECT_EQ(ok("{% if true %}{% set y = 'if shares scope' %}{% endif %}{{ y }}"), "if shares scope");
}

Status error_of(std::string_view source) {
  auto r = render(source);
  EXPECT_FALSE(r.is_ok()) << source << " rendered " << (r.is_ok() ? *r : "");
  return r.is_ok() ? Status::ok() : r.status();
}

TEST(Errors, UnknownTagIsBadInputNamingLineAndTag) {
  const Status s = error_of("line one\n{% do x.append(1) %}");
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("line 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unknown tag 'do'"), std::string::npos) << s.message();
}

TEST(Errors, UnclosedBlockNamesTheBlockAndWhereItOpened) {
  const Status s = error_of("x\n\n{% for m in messages %}{% if m %}{% endif %}");
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("line 3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'for'"), std::string::npos) << s.message();
}

TEST(Errors, RaiseExceptionCarriesTheTemplatesMessage) {
  const Status s = error_of("{% if true %}\n{{ raise_exception('Conversation roles must alternate') }}{% endif %}");
  EXPECT_EQ(s.code(), ErrorCode::kBadInput);
  EXPECT_NE(s.message().find("line 2: Conversation roles must alternate"), std::string::npos) << s.message();
}

TEST(Errors, JinjaFeaturesOutsideTheSubsetAreUnsupported) {
  EXPECT_EQ(error_of("{% with x = 1 %}{{ x }}{% endwith %}").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error_of("{% macro m() %}{% endmacro %}{% call m() %}{% endcall %}").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error_of("{{ range(*[1, 2]) }}").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error_of("{% for x in [1] recursive %}{% endfor %}").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error_of("{{ '{:>3}'.format(1) }}").code(), ErrorCode::kUnsupported);
}

TEST(Errors, HostileNestingAndRecursionAreErrorsNotCrashes) {
  EXPECT_FALSE(render("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").is_ok());
  EXPECT_FALSE(render("{{ " + std::string(5000, '-') + "1 }}").is_ok());
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  EXPECT_FALSE(render(ifs).is_ok());
  EXPECT_FALSE(render("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}").is_ok());
  EXPECT_FALSE(render("{{ 9223372036854775807 + 1 }}").is_ok());
  EXPECT_FALSE(render("{{ (-9223372036854775807 - 1) // -1 }}").is_ok());
  EXPECT_FALSE(render("{{ 'ab' * 9223372036854775807 }}").is_ok());
  EXPECT_FALSE(render("{{ 'x' | indent([1]) }}").is_ok());
  EXPECT_FALSE(render("{{ 12 is divisibleby 'a' }}").is_ok());
  EXPECT_FALSE(render("{{ '{99999999999999999999}'.format(1) }}").is_ok());
  EXPECT_FALSE(render("{{ '\\U00110000' }}").is_ok());
  EXPECT_EQ(ok("{{ 1 ** 1000000000000000000 }} {{ [1, 2, 3][::-9223372036854775807 - 1] }}"), "1 [3]");
}

// repr, ==, tojson and destruction recurse once per level. Inputs written for fuzz_chat_template
// (kept in its corpus as regress-*) overflowed the stack (a namespace wrapping its own value in
// a loop, deep messages JSON) and leaked (a namespace holding a list that holds it). Values
// deeper than kMaxNesting are refused where they are stored, and namespaces cannot hold
// namespaces, so no cycle can form.
TEST(Errors, DeeplyNestedAndSelfReferentialValuesAreRefused) {
  const Status deep = error_of("{% set ns = namespace(x=[]) %}{% for i in range(99999) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}");
  EXPECT_EQ(deep.code(), ErrorCode::kBadInput);
  EXPECT_NE(deep.message().find("nested deeper than 100 levels"), std::string::npos) << deep.message();
  std::string chain = "{% set v0 = 1 %}";
  for (int i = 1; i <= 30; ++i) chain += fmt::format("{{% set v{} = [[[[v{}]]]] %}}", i, i - 1);
  EXPECT_EQ(error_of(chain + "{{ v30 }}").code(), ErrorCode::kBadInput);
  EXPECT_EQ(error_of("{% set ns = namespace(a=1) %}{% set ns.s = ns %}{{ ns }}").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error_of("{% set ns = namespace(a=1) %}{% set ns.s = [ns] %}x").code(), ErrorCode::kUnsupported);
  EXPECT_EQ(error_of("{{ namespace(a={'b': namespace()}) }}").code(), ErrorCode::kUnsupported);
  // A namespace put in a list and then deepened cannot be stored in another namespace.
  EXPECT_EQ(error_of("{% set root = namespace(v=[]) %}{% for i in range(999) %}{% set n = namespace(v=0) %}"
                     "{% set holder = [n] %}{% set n.v = root.v %}{% set root.v = holder %}{% endfor %}")
                .code(),
            ErrorCode::kUnsupported);
  EXPECT_EQ(ok("{% set ns = namespace(x=[]) %}{% for i in range(99) %}{% set ns.x = [ns.x] %}{% endfor %}"
               "{{ (ns.x|tojson)[:3] }} {{ ns.x == ns.x }} {{ [ns]|length }}"),
            "[[[ True 1");

  auto t = ChatTemplate::parse("{{ messages|tojson }}{{ tools|length }}");
  ASSERT_TRUE(t.is_ok());
  const auto nested = [](int levels) {
    return nlohmann::ordered_json::parse(std::string(levels, '[') + "1" + std::string(levels, ']'));
  };
  RenderOptions o;
  o.extra_context["tools"] = nested(3);
  EXPECT_TRUE(t->render_json(nested(100), o).is_ok());
  const auto too_deep = t->render_json(nested(20000), o);
  ASSERT_FALSE(too_deep.is_ok());
  EXPECT_EQ(too_deep.status().code(), ErrorCode::kBadInput);
  EXPECT_NE(too_deep.status().message().find("messages: JSON nested deeper than 100 levels"), std::string::npos)
      << too_deep.status().message();
  o.extra_context["tools"] = nested(20000);
  EXPECT_FALSE(t->render_json(nested(1), o).is_ok());
}

// Every prefix of every real template either parses or fails to; either way rendering
// returns a Status. Under ASan this is the "never crashes" check on broken input.
TEST(Errors, TruncatedRealTemplatesFailCleanly) {
  const nlohmann::ordered_json messages = oracle()["conversations"]["tool_calls"]["messages"];
  int parsed = 0, failed = 0;
  for (const auto& [name, tmpl] : oracle()["templates"].items()) {
    const std::string source = read_file(std::string(OG_TEST_DATA) + "/chat/" + tmpl["file"].get<std::string>());
    for (size_t n = 0; n < source.size(); n += 31) {
      auto t = ChatTemplate::parse(std::string_view(source).substr(0, n));
      if (!t.is_ok()) {
        ++failed;
        continue;
      }
      ++parsed;
      (void)t->render_json(messages, RenderOptions{});
    }
  }
  EXPECT_GT(parsed, 20);
  EXPECT_GT(failed, 1000);
}

}  // namespace
}  // namespace og::chat
