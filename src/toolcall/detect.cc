#include "toolcall/detect.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "constrain/value_notation.h"
#include "toolcall/json_extent.h"

namespace og::toolcall {
namespace {

using ojson = nlohmann::ordered_json;

// Marker strings no template writes by itself; the two calls' names differ at the end only
// after a common prefix that is not a name itself (so neither is a prefix of the other).
constexpr const char* kUser = "ogprobe_user";
constexpr const char* kText = "ogprobe_text";
constexpr const char* kThought = "ogprobe_thought";
constexpr const char* kNames[2] = {"ogprobe_fa", "ogprobe_fb"};
constexpr const char* kIds[2] = {"ogprobe01", "ogprobe02"};  // 9 letters and digits: what the strictest templates demand

ojson probe_tool(const char* name) {
  return {{"type", "function"},
          {"function", {{"name", name}, {"description", "probe"},
                        {"parameters", {{"type", "object"}, {"properties", {{"ogprobe_arg", {{"type", "string"}}}}}}}}}};
}

ojson probe_call(int i, bool as_string) {
  const ojson args = {{"ogprobe_arg", fmt::format("ogprobe_v{}", i)}};
  return {{"id", kIds[i]}, {"type", "function"},
          {"function", {{"name", kNames[i]}, {"arguments", as_string ? ojson(args.dump()) : args}}}};
}

size_t common_prefix(std::string_view a, std::string_view b);
constexpr size_t kMaxPromptTail = 32;

class Prober {
 public:
  Prober(const chat::ChatTemplate& t, chat::RenderOptions o) : t_(t), o_(std::move(o)) {
    o_.extra_context["tools"] = ojson::array({probe_tool(kNames[0]), probe_tool(kNames[1])});
    std::tm fixed{};
    fixed.tm_year = 124, fixed.tm_mon = 6, fixed.tm_mday = 26;
    o_.now = fixed;
  }
  // The text `assistant` adds after the generation prompt; nullopt when the template refuses
  // it or does not begin with the generation prompt.
  std::optional<std::string> reply(const ojson& assistant) {
    const ojson user = {{"role", "user"}, {"content", kUser}};
    if (!prompt_) {
      auto g = render(ojson::array({user}), true);
      if (!g) return std::nullopt;
      prompt_ = *g;
    }
    auto all = render(ojson::array({user, assistant}), false);
    if (!all) return std::nullopt;
    // The turn starts where the generation prompt ends, or a little before: a prompt may end
    // with text the model is to continue from that a written turn leaves out (an opened
    // "<think>\n").
    size_t n = common_prefix(*all, *prompt_);
    if (prompt_->size() - n > kMaxPromptTail) return std::nullopt;
    shared_ = all->substr(0, n), cut_ = prompt_->substr(n);
    // ... cut where a tag or line of the prompt's tail begins, not inside it ("<think>" and
    // "<tool_call>" share their "<").
    if (n < prompt_->size())
      while (n > 0 && (*prompt_)[n - 1] != '\n' && (*prompt_)[n - 1] != '>') --n;
    std::string turn = all->substr(n);
    // A turn may write again the tag that ends the prompt's cut tail (a prompt that closes an
    // empty reasoning block, "<think></think>", and a turn that begins "</think>"): the model
    // has it already, so it is no part of what the model writes.
    const std::string tail = prompt_->substr(n);
    for (size_t k = tail.size(); k-- > 0;)
      if (tail[k] == '<' && k + 2 <= tail.size() && turn.starts_with(std::string_view(tail).substr(k))) {
        turn.erase(0, tail.size() - k);
        break;
      }
    return turn;
  }
  const std::string& prompt() const { return *prompt_; }
  // Of the last reply: the rendered conversation up to where it leaves the generation prompt,
  // and the prompt's text from there on (what the written turn does not repeat).
  const std::string& shared() const { return shared_; }
  const std::string& cut() const { return cut_; }

 private:
  std::optional<std::string> render(const ojson& messages, bool gen) {
    chat::RenderOptions o = o_;
    o.add_generation_prompt = gen;
    auto r = t_.render_json(messages, o);
    if (!r.is_ok()) return std::nullopt;
    return *r;
  }
  const chat::ChatTemplate& t_;
  chat::RenderOptions o_;
  std::optional<std::string> prompt_;
  std::string shared_, cut_;
};

std::string trim(std::string_view s) {
  const auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// `n`, or where the tag it cuts into opens: a frame never ends inside a <...> tag of `s`.
size_t outside_tag(const std::string& s, size_t n) {
  const size_t lt = n ? s.rfind('<', n - 1) : std::string::npos;
  return lt != std::string::npos && s.find('>', lt) >= n ? lt : n;
}

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}
size_t common_suffix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

// The JSON object around `inside` (the probe argument's key): [begin, end) of its braces.
std::optional<std::pair<size_t, size_t>> json_object_around(const std::string& s, size_t inside) {
  const size_t open = s.rfind('{', inside);
  if (open == std::string::npos) return std::nullopt;
  JsonExtent extent;
  for (size_t i = open; i < s.size(); ++i)
    if (extent.step(s[i])) return std::pair{open, i + 1};
  return std::nullopt;
}

// One call's pieces in a rendered reply: where its name and its arguments are.
struct Located {
  size_t name = 0, args_begin = 0, args_end = 0;
};
// The arguments must be the probe's own, as JSON: a template that writes them in a dialect of
// its own (unquoted keys, its own string quotes, one tag per parameter) is not framed JSON,
// and reading its braces as JSON would make the server constrain and parse the wrong text.
std::optional<Located> locate(const std::string& r, int i, size_t from, bool* non_json = nullptr) {
  const size_t name = r.find(kNames[i], from);
  if (name == std::string::npos) return std::nullopt;
  const size_t key = r.find("ogprobe_arg", name);
  if (key == std::string::npos) return std::nullopt;
  auto obj = json_object_around(r, key);
  if (!obj || obj->first < name) return std::nullopt;
  const ojson args = ojson::parse(r.substr(obj->first, obj->second - obj->first), nullptr, /*allow_exceptions=*/false);
  // (A discarded value compares false to everything, != included: test it first.)
  if (args.is_discarded() || !(args == ojson{{"ogprobe_arg", fmt::format("ogprobe_v{}", i)}})) {
    if (non_json) *non_json = true;
    return std::nullopt;
  }
  return Located{name, obj->first, obj->second};
}

// Arguments in a notation of the template's own (constrain/value_notation.h): the probe call's
// {"ogprobe_arg": "ogprobe_v0"} written as {ogprobe_arg:Q ogprobe_v0 Q}, Q the string quote;
// then a call holding every kind of value, keys out of order, must be written exactly as the
// notation writes it (sorted or not), or the template's notation is not this one.
std::optional<constrain::ValueNotation> read_notation(const std::string& r, const std::string& rich_reply,
                                                      const nlohmann::ordered_json& rich_args) {
  const std::string key = "ogprobe_arg", value = "ogprobe_v0";
  const size_t name = r.find(kNames[0]);
  const size_t k = name == std::string::npos ? name : r.find(key + ":", name);
  if (k == std::string::npos || k == 0 || r[k - 1] != '{') return std::nullopt;
  const size_t q = k + key.size() + 1, v = r.find(value, q);
  if (v == std::string::npos || v == q) return std::nullopt;
  const std::string quote = r.substr(q, v - q);
  if (r.compare(v + value.size(), quote.size() + 1, quote + "}") != 0) return std::nullopt;
  for (bool sorted : {false, true}) {
    const constrain::ValueNotation n{.quote = quote, .sorted_keys = sorted};
    if (rich_reply.find(notation_text(rich_args, n)) != std::string::npos) return n;
  }
  return std::nullopt;
}
// A call written in the notation: its name and its arguments' extent.
std::optional<Located> locate_notation(const std::string& r, int i, size_t from, const constrain::ValueNotation& n) {
  const size_t name = r.find(kNames[i], from);
  if (name == std::string::npos) return std::nullopt;
  const std::string args = notation_text(ojson{{"ogprobe_arg", fmt::format("ogprobe_v{}", i)}}, n);
  const size_t at = r.find(args, name);
  if (at == std::string::npos) return std::nullopt;
  return Located{name, at, at + args.size()};
}

// `tagged` probes: two string arguments per call (then one a number: a template whose frame
// depends on the value's type is not one frame).
ojson tagged_call(int i, bool number = false, const ojson* second = nullptr) {
  ojson args = {{"ogprobe_arg", fmt::format("ogprobe_v{}", i)}};
  args["ogprobe_arh"] = second ? *second : number ? ojson(7) : ojson(fmt::format("ogprobe_w{}", i));
  return {{"id", kIds[i]}, {"type", "function"}, {"function", {{"name", kNames[i]}, {"arguments", args}}}};
}

// One argument's frame: param_before KEY param_mid VALUE param_after.
struct TaggedFrame {
  std::string before, mid, after;
  std::string mid_json;  // the typed probe's mid before its number, where it differs from `mid`
};

// Where call i's two arguments are in `r` (from `from`): the frame as read there, and the call.
std::optional<std::pair<TaggedFrame, Located>> read_tagged(const std::string& r, int i, size_t from, bool number = false) {
  const size_t name = r.find(kNames[i], from);
  if (name == std::string::npos) return std::nullopt;
  const std::string v1s = fmt::format("ogprobe_v{}", i), v2s = number ? "7" : fmt::format("ogprobe_w{}", i);
  const size_t k_len = std::string_view("ogprobe_arg").size();  // both keys' length
  const size_t k1 = r.find("ogprobe_arg", name);
  const size_t v1 = k1 == std::string::npos ? k1 : r.find(v1s, k1);
  const size_t k2 = v1 == std::string::npos ? v1 : r.find("ogprobe_arh", v1);
  const size_t v2 = k2 == std::string::npos ? k2 : r.find(v2s, k2 + k_len);
  if (v2 == std::string::npos) return std::nullopt;
  const std::string mid1 = r.substr(k1 + k_len, v1 - k1 - k_len), mid2 = r.substr(k2 + k_len, v2 - k2 - k_len);
  const std::string between = r.substr(v1 + v1s.size(), k2 - v1 - v1s.size());
  const std::string tail = r.substr(v2 + v2s.size());
  if (mid1.empty() || mid2.empty() || (mid1 != mid2 && !number)) return std::nullopt;
  // between = after + before; tail = after + the call's end. Never cut inside a tag: after
  // "</parameter>\n" come "<parameter=" and "</function>", which share "<" and no frame.
  const size_t n_after = outside_tag(between, std::min(common_prefix(between, tail), between.size()));
  TaggedFrame f{.before = between.substr(n_after), .mid = mid1, .after = between.substr(0, n_after),
                .mid_json = mid2 == mid1 ? "" : mid2};
  if (f.before.empty() || f.after.empty()) return std::nullopt;
  const std::string head = r.substr(name, k1 - name);
  if (!head.ends_with(f.before)) return std::nullopt;
  return std::pair{f, Located{name, k1 - f.before.size(), v2 + v2s.size() + f.after.size()}};
}

std::string with_id_slots(std::string s) {
  for (const char* id : kIds)
    for (size_t at; (at = s.find(id)) != std::string::npos;) s.replace(at, std::string_view(id).size(), 1, kIdSlot);
  return s;
}

}  // namespace

Detection detect_syntax(const chat::ChatTemplate& tmpl, const chat::RenderOptions& options) {
  Prober p(tmpl, options);
  Detection d;
  ToolCallSyntax& s = d.syntax;

  // Content and reasoning frames (kept for the generic format too).
  const std::optional<std::string> content = p.reply({{"role", "assistant"}, {"content", kText}});
  if (!content) {
    d.why = "the template does not render an assistant turn after the generation prompt";
    return d;
  }
  const size_t at_text = content->find(kText);
  const std::string end = at_text == std::string::npos ? "" : content->substr(at_text + std::string_view(kText).size());
  const std::string head = at_text == std::string::npos ? "" : content->substr(0, at_text);
  std::string empty_reasoning;  // what an assistant turn without reasoning opens with (an empty <think></think>)
  if (auto r = p.reply({{"role", "assistant"}, {"content", kText}, {"reasoning_content", kThought}, {"thinking", kThought}})) {
    const size_t t = r->find(kThought), c = r->find(kText);
    if (t != std::string::npos && c != std::string::npos && t < c) {
      const std::string open = r->substr(0, t), close = r->substr(t + std::string_view(kThought).size(), c - t - std::string_view(kThought).size());
      std::string between = close;
      if (head == open + close) {
        empty_reasoning = head;  // the empty block is written anyway: no content frame
      } else if (!head.empty() && head != close && close.ends_with(head)) {
        between = close.substr(0, close.size() - head.size());
        s.content_open = head;
      }
      s.reasoning_open = trim(open), s.reasoning_close = trim(between);
      if (s.reasoning_open.empty() && !s.reasoning_close.empty()) {
        // The turn's reasoning opens in text the generation prompt also has: either the prompt
        // opens and at once closes an empty block (its last tag before the cut is the open
        // one), or the prompt opens the reasoning with text the written turn leaves out.
        const std::string shared = p.shared();
        if (trim(p.cut()) == s.reasoning_close && shared.ends_with(">") && shared.rfind('<') != std::string::npos) {
          s.reasoning_open = shared.substr(shared.rfind('<'));
        } else if (!trim(p.cut()).empty()) {
          s.reasoning_open = trim(p.cut());
        }
      }
    }
  }
  if (!s.has_reasoning()) {  // a template that opens the reasoning in the generation prompt
    const std::string g = trim(p.prompt());
    if (g.ends_with("<think>")) s.reasoning_open = "<think>", s.reasoning_close = "</think>";
  }
  if (s.reasoning_open.empty() != s.reasoning_close.empty()) {  // half a frame is no frame
    s.reasoning_open.clear(), s.reasoning_close.clear(), s.content_open.clear();
  }
  if (s.has_reasoning() && trim(p.prompt()).ends_with(s.reasoning_open)) s.starts_in_reasoning = true;

  // One call, then two, with arguments as a mapping first (what `| tojson` templates need),
  // then as JSON text; content null first, then "".
  // A mapping written neither as JSON nor as Python's str() of the dict (what a template
  // that expects JSON text prints when given a mapping) is the template's own dialect: the
  // model writes its calls that way, so JSON text passed through is no reading of them.
  std::optional<std::string> one, two;
  bool non_json = false, dialect = false;
  for (bool as_string : {false, true}) {
    if (dialect) break;
    for (const ojson& c : {ojson(nullptr), ojson("")}) {
      one = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({probe_call(0, as_string)})}});
      bool bad = false;
      if (!one || !locate(*one, 0, 0, &bad)) {
        if (bad && !as_string && one->find("{'ogprobe_arg': 'ogprobe_v0'}") == std::string::npos) dialect = true;
        non_json = non_json || bad;
        one.reset();
        continue;
      }
      two = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({probe_call(0, as_string), probe_call(1, as_string)})}});
      break;
    }
    if (one) {
      s.arguments_as_string = as_string;
      break;
    }
  }
  // Arguments in the template's own notation?
  std::optional<constrain::ValueNotation> notation;
  if (!one && dialect) {
    // Every kind of value, the keys out of their sorted order.
    const ojson rich = ojson::parse(R"({"ogprobe_arh": [1, -2.5, true, false, "ogprobe_s"], "ogprobe_arg": {"ogprobe_b": "ogprobe_t", "ogprobe_a": {}}})");
    for (const ojson& c : {ojson(nullptr), ojson("")}) {
      auto r = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({probe_call(0, false)})}});
      ojson call = probe_call(0, false);
      call["function"]["arguments"] = rich;
      auto rr = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({call})}});
      if (!r || !rr || !(notation = read_notation(*r, *rr, rich))) continue;
      one = r;
      two = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({probe_call(0, false), probe_call(1, false)})}});
      break;
    }
  }
  const auto strip = [&](std::string r) {
    if (!empty_reasoning.empty() && r.starts_with(empty_reasoning)) r.erase(0, empty_reasoning.size());
    // A prompt that opened the reasoning: a written turn may begin by closing an empty one.
    if (s.starts_in_reasoning && r.starts_with(s.reasoning_close)) {
      size_t n = s.reasoning_close.size();
      while (n < r.size() && (r[n] == '\n' || r[n] == ' ')) ++n;
      r.erase(0, n);
    }
    if (!end.empty() && r.ends_with(end)) r.resize(r.size() - end.size());
    return r;
  };
  // No JSON arguments: each argument between tags of its own (`tagged`)?
  std::optional<TaggedFrame> tagged;
  std::string tagged_why;
  bool python_values = false;
  if (!one && !dialect) {
    for (const ojson& c : {ojson(nullptr), ojson("")}) {
      auto r = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({tagged_call(0)})}});
      if (!r) continue;
      auto f = read_tagged(strip(*r), 0, 0);
      if (!f) continue;
      // Content null printed as Python's "None" before the call: try "" instead.
      if (c.is_null() && strip(*r).substr(0, f->second.name).find("None") != std::string::npos) continue;
      auto typed = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({tagged_call(0, true)})}});
      auto g = typed ? read_tagged(strip(*typed), 0, 0, true) : std::nullopt;
      // A frame that marks a value's kind (DSML's string="true" / "false") keeps a mid for each.
      if (!g || g->first.mid != f->first.mid || g->first.after != f->first.after ||
          g->first.mid_json.find(kNames[0]) != std::string::npos) {
        tagged_why = "the template frames an argument by its value's type";
        break;
      }
      tagged = f->first;
      tagged->mid_json = g->first.mid_json;
      // A value that is not a string printed by Python's str() ({{ value }}) rather than as JSON.
      const ojson rich = ojson::parse(R"([{"ogprobe_k": true, "ogprobe_j": null, "ogprobe_s": "it's"}, 1.5])");
      if (auto pr = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({tagged_call(0, false, &rich)})}}))
        python_values = pr->find(constrain::notation_text(rich, constrain::ValueNotation{.python = true})) != std::string::npos;
      one = r;
      two = p.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({tagged_call(0), tagged_call(1)})}});
      break;
    }
  }
  if (!one) {
    d.why = !tagged_why.empty() ? tagged_why
            : non_json          ? "the template writes a call's arguments in a form that is not JSON"
                                : "the template writes no tool calls";
    return d;
  }
  // A call in a reply: its name and its arguments' extent.
  const auto locate_call = [&](const std::string& r, int i, size_t from) -> std::optional<Located> {
    if (notation) return locate_notation(r, i, from, *notation);
    if (!tagged) return locate(r, i, from);
    auto f = read_tagged(r, i, from);
    if (!f || f->first.before != tagged->before || f->first.mid != tagged->mid || f->first.after != tagged->after)
      return std::nullopt;
    return f->second;
  };
  const std::string r1 = strip(*one);
  const Located a = *locate_call(r1, 0, 0);
  const std::string lead = with_id_slots(r1.substr(0, a.name));
  s.mid = with_id_slots(r1.substr(a.name + std::string_view(kNames[0]).size(), a.args_begin - a.name - std::string_view(kNames[0]).size()));
  std::string tail = with_id_slots(r1.substr(a.args_end));
  std::optional<Located> b, a2;
  std::string r2;
  int32_t counter_digits = 0;  // a call counter in `mid`, read as an id slot of this many digits
  if (two) {
    r2 = strip(*two);
    a2 = locate_call(r2, 0, 0);
    if (a2) b = locate_call(r2, 1, a2->args_end);
  }
  if (b) {
    // A counter in the frame (one format's "functions.NAME:0", then ":1"): the digits where the two
    // calls' mids differ become an id slot.
    const size_t name_end = b->name + std::string_view(kNames[1]).size();
    const std::string mid2 = with_id_slots(r2.substr(name_end, b->args_begin - name_end));
    if (mid2 != s.mid && mid2.size() == s.mid.size()) {
      const size_t from = common_prefix(s.mid, mid2), to = s.mid.size() - common_suffix(s.mid, mid2);
      const auto digits = [](std::string_view x) {
        return !x.empty() && std::all_of(x.begin(), x.end(), [](char c) { return c >= '0' && c <= '9'; });
      };
      if (from < to && digits(std::string_view(s.mid).substr(from, to - from)) &&
          digits(std::string_view(mid2).substr(from, to - from)) && s.mid.find(kIdSlot) == std::string::npos) {
        counter_digits = static_cast<int32_t>(to - from);
        s.mid = s.mid.substr(0, from) + kIdSlot + s.mid.substr(to);
      }
    }
  }
  if (b && with_id_slots(r2.substr(0, a2->name)) == lead) {
    const std::string between = with_id_slots(r2.substr(a2->args_end, b->name - a2->args_end));
    const std::string tail2 = with_id_slots(r2.substr(b->args_end));
    // between = after + separator + before; lead = prefix + before; tail = after + suffix.
    // Never inside a tag: "<|tool_call>" after one call and "<|tool_response>" after the last
    // share "<|tool_", which is no frame of either.
    const size_t n_after = outside_tag(between, std::min(common_prefix(tail2, between), between.size()));
    s.after = between.substr(0, n_after);
    const std::string rest = between.substr(n_after);
    const size_t n_before = common_suffix(lead, rest);
    s.before = lead.substr(lead.size() - n_before);
    s.prefix = lead.substr(0, lead.size() - n_before);
    s.separator = rest.substr(0, rest.size() - n_before);
    s.suffix = tail2.substr(n_after);
    // A call counter written before each call ("tool_call_id": "0", then "1"): the
    // digits that end the prefix and the separator, one apart, become an id slot that opens
    // `before`, so a third call's "2" is read too.
    const auto trailing_digits = [](const std::string& x) {
      size_t n = 0;
      while (n < x.size() && x[x.size() - 1 - n] >= '0' && x[x.size() - 1 - n] <= '9') ++n;
      return n;
    };
    const size_t dp = trailing_digits(s.prefix), ds = trailing_digits(s.separator);
    const auto number = [](const std::string& x, size_t n) { return n > 0 && n <= 6 ? std::stol(x.substr(x.size() - n)) : -1L; };
    if (counter_digits == 0 && dp > 0 && dp == ds && !trim(s.prefix.substr(0, s.prefix.size() - dp)).empty() &&
        number(s.separator, ds) == number(s.prefix, dp) + 1 && (s.before + s.mid).find(kIdSlot) == std::string::npos) {
      counter_digits = static_cast<int32_t>(dp);
      s.prefix.resize(s.prefix.size() - dp), s.separator.resize(s.separator.size() - ds);
      s.before = std::string(1, kIdSlot) + s.before;
    }
  } else {
    s.before = lead, s.after = tail, s.max_calls = 1;
  }
  // The generic format, keeping the reasoning frames read above.
  const auto generic = [&](const char* why) {
    d.syntax = ToolCallSyntax{.reasoning_open = s.reasoning_open, .reasoning_close = s.reasoning_close,
                              .content_open = s.content_open, .starts_in_reasoning = s.starts_in_reasoning};
    d.why = why;
    return d;
  };
  if (s.mid.find(kNames[0]) != std::string::npos || s.after.find(kNames[0]) != std::string::npos) {
    return generic("the template writes a call's name twice");
  }
  if ((s.prefix + s.separator + s.suffix).find(kIdSlot) != std::string::npos) {
    return generic("the template writes a call id outside the call's own frame");
  }
  if ((s.before + s.mid + s.after).find(kIdSlot) != std::string::npos)
    s.id_length = counter_digits ? counter_digits : static_cast<int32_t>(std::string_view(kIds[0]).size());
  if (s.prefix.empty() && s.before.empty() && trim(s.mid).empty()) {
    return generic("the template writes a call's name with nothing to recognise it by");
  }
  s.format = "framed";
  if (notation) s.args_quote = notation->quote, s.args_sorted = notation->sorted_keys;
  if (tagged) {
    s.format = "tagged";
    s.param_before = tagged->before, s.param_mid = tagged->mid, s.param_after = tagged->after;
    s.param_mid_json = tagged->mid_json;
    s.python_values = python_values;
  }
  if (!s.has_reasoning()) {
    // A template that writes reasoning only before tool calls (one that keeps it on turns that
    // call tools): the call's turn with reasoning is the reasoning's frame, then the call. Read
    // with thinking on (a prompt that closes an empty reasoning block otherwise hides the open).
    chat::RenderOptions thinking = options;
    thinking.extra_context["enable_thinking"] = true;
    Prober q(tmpl, thinking);
    const ojson call = tagged ? tagged_call(0) : probe_call(0, s.arguments_as_string);
    for (const ojson& c : {ojson(nullptr), ojson("")}) {
      auto plain = q.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({call})}});
      auto with = q.reply({{"role", "assistant"}, {"content", c}, {"tool_calls", ojson::array({call})},
                           {"reasoning_content", kThought}, {"thinking", kThought}});
      if (!plain || !with || *plain == *with || !with->ends_with(*plain)) continue;
      const size_t t = with->find(kThought), head = with->size() - plain->size(), n = std::string_view(kThought).size();
      if (t == std::string::npos || t + n > head) continue;
      const std::string open = trim(with->substr(0, t)), close = trim(with->substr(t + n, head - t - n));
      if (open.empty() || close.empty()) continue;
      s.reasoning_open = open, s.reasoning_close = close;
      s.starts_in_reasoning = trim(p.prompt()).ends_with(open);
      break;
    }
  }
  d.why = s.max_calls == 1 ? "one call per message, read from the template" : "read from the template";
  if (tagged) d.why += ", each argument between tags";
  if (notation) d.why += ", the arguments in its own notation";
  return d;
}

}  // namespace og::toolcall
