#include "toolcall/framed_calls.h"

#include "toolcall/json_extent.h"
#include "toolcall/notation_reader.h"
#include "toolcall/python_literal.h"

#include <algorithm>

namespace og::toolcall {
namespace {

using constrain::FramePiece;
using Kind = ReplyEvent::Kind;

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
std::string trim_left(std::string s) {
  size_t n = 0;
  while (n < s.size() && is_ws(s[n])) ++n;
  return s.substr(n);
}

// Where `tag` first stands outside the strings of a JSON (or Python literal) value that starts
// text: a '"' or '\'' opens a string where a value may begin (at the start, or after '[', '{',
// ',' or ':' and blanks), a backslash escapes the next byte and the same quote closes it. npos
// when the tag stands nowhere outside, or the text ends inside a string. So a string nested in
// a value may hold the tag that closes the value (the grammar lets it), while a quote inside a
// word ("it's") opens nothing.
size_t find_outside_strings(std::string_view text, std::string_view tag) {
  char quote = 0, last = 0;  // last: the byte before, blanks skipped (0: none yet)
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0, last = c;
      continue;
    }
    if (text.substr(i, tag.size()) == tag) return i;
    if ((c == '"' || c == '\'') && (last == 0 || last == '[' || last == '{' || last == ',' || last == ':')) {
      quote = c;
      continue;
    }
    if (!is_ws(c)) last = c;
  }
  return std::string_view::npos;
}

// A literal (with id slots) against text at `pos`: the bytes matched, or kPartial when the text
// ends while it still matches, or kNo.
constexpr int64_t kPartial = -1, kNo = -2;
int64_t match(std::string_view text, size_t pos, std::string_view lit, int32_t id_length, std::string* id = nullptr) {
  size_t i = pos;
  for (char c : lit) {
    if (c == kIdSlot) {
      for (int32_t k = 0; k < id_length; ++k, ++i) {
        if (i >= text.size()) return kPartial;
        if (!is_alnum(text[i])) return kNo;
        if (id) *id += text[i];
      }
      continue;
    }
    if (i >= text.size()) return kPartial;
    if (text[i++] != c) return kNo;
  }
  return static_cast<int64_t>(i - pos);
}

class FramedParser final : public ReplyParser {
 public:
  FramedParser(const ToolCallSyntax& s, bool calls, const ToolSet* tools, const constrain::SpecialTexts& sp)
      : id_length_(s.id_length), calls_(calls), max_calls_(s.max_calls) {
    // The tools' schemas decide which `tagged` values are strings; the parser may outlive the
    // request's ToolSet, so it keeps its own copy of them.
    if (tools && s.format == "tagged") tools_ = tools->tools;
    const auto m = [&sp](const std::string& t) { return sp.mark(t); };
    tagged_ = s.format == "tagged";
    args_quote_ = m(s.args_quote);
    param_before_ = m(s.param_before), param_mid_ = m(s.param_mid), param_after_ = m(s.param_after);
    param_mid_json_ = m(s.param_mid_json);
    reasoning_open_ = m(s.reasoning_open), reasoning_close_ = m(s.reasoning_close), content_open_ = m(s.content_open);
    start_ = m(trim_left(s.prefix + s.before)), next_ = m(s.separator + s.before), suffix_ = m(s.suffix);
    after_ = m(s.after);
    // The name ends where `mid` starts; an id slot in `mid` splits it.
    const std::string mid = m(s.mid);
    const size_t slot = mid.find(kIdSlot);
    mid_head_ = mid.substr(0, slot);
    if (slot != std::string::npos) mid_tail_ = mid.substr(slot + 1), id_in_mid_ = true;
    mode_ = s.has_reasoning() && s.starts_in_reasoning ? Mode::kReasoning : Mode::kContent;
  }

  void push(std::string_view text, std::vector<ReplyEvent>& out) override {
    buf_ += text;
    run(out, false);
  }
  void finish(std::vector<ReplyEvent>& out) override { run(out, true); }

 private:
  enum class Mode { kContent, kReasoning, kName, kId, kArgs, kAfter, kDone };

  // Content and reasoning text without special-token marks (unknown specials are dropped, as
  // decoding with skip_special does); a mark's state carries across pieces.
  std::string drop_specials(std::string_view s) {
    std::string out;
    for (char c : s) {
      if (c == constrain::kSpecialMark) in_mark_ = !in_mark_;
      else if (!in_mark_) out += c;
    }
    return out;
  }

  void emit(std::vector<ReplyEvent>& out, Kind k, std::string_view raw) {
    std::string t = k == Kind::kArguments ? std::string(raw) : drop_specials(raw);
    bool& started = k == Kind::kContent ? content_started_ : reasoning_started_;
    if (k == Kind::kContent || k == Kind::kReasoning) {  // leading whitespace is the frame's, not the text's
      if (!started) {
        size_t n = 0;
        while (n < t.size() && is_ws(t[n])) ++n;
        t.erase(0, n);
      }
      if (t.empty()) return;
      started = true;
    }
    if (t.empty()) return;
    if (!out.empty() && out.back().kind == k && k != Kind::kCallStart && out.back().index == index_) out.back().text += t;
    else out.push_back({.kind = k, .text = std::move(t), .index = index_});
  }

  // Earliest of `lits` in buf_ from 0: its index and position; else how much of buf_'s end
  // might still begin one (to hold back).
  struct Found {
    int which = -1;
    size_t at = 0;
    size_t len = 0;  // bytes matched: an id slot matches id_length of them
    size_t hold = 0;
  };
  Found find_first(const std::vector<const std::string*>& lits) const {
    Found f;
    for (size_t i = 0; i < buf_.size(); ++i) {
      for (size_t k = 0; k < lits.size(); ++k) {
        if (lits[k]->empty()) continue;
        const int64_t r = match(buf_, i, *lits[k], id_length_);
        if (r >= 0) return {static_cast<int>(k), i, static_cast<size_t>(r), 0};
        if (r == kPartial && f.hold == 0) f.hold = buf_.size() - i;
      }
    }
    // An unfinished special-token mark is held too.
    const size_t marks = static_cast<size_t>(std::count(buf_.begin(), buf_.end(), constrain::kSpecialMark));
    if (marks % 2) f.hold = std::max(f.hold, buf_.size() - buf_.rfind(constrain::kSpecialMark));
    return f;
  }

  void consume(size_t n) { buf_.erase(0, n); }

  void run(std::vector<ReplyEvent>& out, bool end) {
    for (;;) {
      switch (mode_) {
        case Mode::kContent:
        case Mode::kReasoning: {
          const bool content = mode_ == Mode::kContent;
          std::vector<const std::string*> lits;
          if (content) lits = {&reasoning_open_, &content_open_, calls_ && !calls_done() ? &start_ : &kEmpty};
          else lits = {&reasoning_close_};
          const Found f = find_first(lits);
          const Kind k = content ? Kind::kContent : Kind::kReasoning;
          if (f.which < 0) {
            const size_t keep = end ? 0 : f.hold;
            emit(out, k, std::string_view(buf_).substr(0, buf_.size() - keep));
            consume(buf_.size() - keep);
            return;
          }
          emit(out, k, std::string_view(buf_).substr(0, f.at));
          const std::string lit = buf_.substr(f.at, f.len);
          consume(f.at + f.len);
          if (!content) mode_ = Mode::kContent;
          else if (f.which == 0) mode_ = Mode::kReasoning;
          else if (f.which == 2) begin_call(lit);
          break;
        }
        case Mode::kName: {
          // The name runs up to `mid`; a character a name cannot hold must begin it.
          size_t k = 0;
          while (k < buf_.size() && k <= 64 && (is_alnum(buf_[k]) || buf_[k] == '_' || buf_[k] == '-' || buf_[k] == '.')) ++k;
          if (k > 64) {
            abandon(out);  // and read on
            break;
          }
          if (k == buf_.size()) {
            if (end) return cut_short();
            return;
          }
          // (No `mid`: the arguments' opening brace ends the name, or in a tagged call the first
          // argument's tag or the call's end.)
          const auto opens = [&](const std::string& frame) { return !frame.empty() && buf_[k] == frame[0]; };
          const int64_t r = !mid_head_.empty() ? match(buf_, k, mid_head_, id_length_)
                            : tagged_          ? (opens(param_before_) || opens(after_) ? 0 : kNo)
                                               : (buf_[k] == '{' ? 0 : kNo);
          if (r == kPartial && end) return cut_short();
          if (r == kNo) {
            abandon(out);  // and read on
            break;
          }
          if (r == kPartial) return;
          name_ = buf_.substr(0, k);
          opening_ += buf_.substr(0, k + mid_head_.size());
          consume(k + mid_head_.size());
          mode_ = id_in_mid_ ? Mode::kId : Mode::kArgs;
          if (!id_in_mid_) start_args(out);
          break;
        }
        case Mode::kId: {
          std::string id;
          const int64_t r = match(buf_, 0, std::string(1, kIdSlot) + mid_tail_, id_length_, &id);
          if (r == kPartial && end) return cut_short();
          if (r == kNo) {
            abandon(out);  // and read on
            break;
          }
          if (r == kPartial) return;
          id_ = id;
          consume(static_cast<size_t>(r));
          mode_ = Mode::kArgs;
          start_args(out);
          break;
        }
        case Mode::kArgs: {
          if (tagged_) {
            if (!tagged_args(out, end)) return;
            break;
          }
          if (!args_quote_.empty()) {
            if (!notation_args(out, end)) return;
            break;
          }
          size_t i = 0;
          while (i < buf_.size() && !args_begun_ && is_ws(buf_[i])) ++i;  // before the value
          consume(i);
          i = 0;
          bool closed = false;
          bool not_json = false;
          for (; i < buf_.size() && !closed; ++i) {
            const char c = buf_[i];
            if (!args_begun_) {
              if (c != '{' && c != '[') {  // not arguments after all: the call keeps none, the rest is content
                not_json = true;
                break;
              }
              args_begun_ = true;
            }
            closed = extent_.step(c);
          }
          if (not_json) {
            ++calls_read_;
            mode_ = Mode::kContent;
            break;
          }
          emit(out, Kind::kArguments, std::string_view(buf_).substr(0, i));
          consume(i);
          if (!closed) return;
          ++calls_read_;
          mode_ = Mode::kAfter;
          break;
        }
        case Mode::kAfter: {
          // after, then the next call (separator + before) or the suffix, or the end.
          const int64_t a = match(buf_, 0, after_, id_length_);
          if (a == kPartial && !end) return;
          if (a >= 0) consume(static_cast<size_t>(a));
          if (a < 0 && !end) {  // the text left the frame: the rest is content
            mode_ = Mode::kContent;
            break;
          }
          mode_ = Mode::kDone;
          break;
        }
        case Mode::kDone: {
          const int64_t more = calls_done() || next_.empty() ? kNo : match(buf_, 0, next_, id_length_);
          const int64_t last = suffix_.empty() ? kNo : match(buf_, 0, suffix_, id_length_);
          if (more >= 0) {
            const std::string lit = buf_.substr(0, static_cast<size_t>(more));
            consume(static_cast<size_t>(more));
            begin_call(lit);
            break;
          }
          if (last >= 0) {
            consume(static_cast<size_t>(last));
            mode_ = Mode::kContent;
            break;
          }
          if (more == kPartial || last == kPartial) {
            if (end) return cut_short();  // the next call's opening, cut short: syntax, not content
            return;
          }
          mode_ = Mode::kContent;
          if (buf_.empty()) return;
          break;
        }
      }
    }
  }

  bool calls_done() const { return max_calls_ > 0 && calls_read_ >= max_calls_; }

  // Arguments in the template's notation, turned into JSON as they stream. False: wait for more.
  bool notation_args(std::vector<ReplyEvent>& out, bool end) {
    if (!args_begun_) {
      size_t i = 0;
      while (i < buf_.size() && is_ws(buf_[i])) ++i;
      consume(i);
      if (buf_.empty()) return false;
      if (buf_[0] != '{') {  // not arguments after all: the call keeps none, the rest is content
        ++calls_read_;
        mode_ = Mode::kContent;
        return true;
      }
      args_begun_ = true;
      notation_ = NotationReader(args_quote_);
    }
    std::string json;
    consume(notation_.read(buf_, end, json));
    if (!notation_.done() && end) notation_.close(json);
    emit(out, Kind::kArguments, json);
    if (!notation_.done()) return false;
    ++calls_read_;
    mode_ = Mode::kAfter;
    return true;
  }

  // `tagged` arguments, one (param_before KEY param_mid VALUE param_after) at a time, turned
  // into the JSON object's text as they stream: a string value (by the tool's schema) streams
  // escaped, any other is held to its end and passed on as JSON. False: wait for more text.
  enum class Param { kNext, kKey, kValue };
  bool tagged_args(std::vector<ReplyEvent>& out, bool end) {
    for (;;) {
      switch (param_) {
        case Param::kNext: {
          const int64_t p = match(buf_, 0, param_before_, id_length_);
          const int64_t a = match(buf_, 0, after_, id_length_);
          if (p >= 0) {
            consume(static_cast<size_t>(p));
            param_ = Param::kKey;
            break;
          }
          if ((p == kPartial || a == kPartial) && a < 0 && !end) return false;
          // The arguments end here (at `after`, or, failing it, wherever they stop).
          emit(out, Kind::kArguments, n_params_ ? "}" : "{}");
          ++calls_read_;
          mode_ = Mode::kAfter;
          return true;
        }
        case Param::kKey: {
          // Where the frame marks the value's kind (param_mid_json), the mark decides; else the schema.
          const size_t at_text = buf_.find(param_mid_);
          const size_t at_json = param_mid_json_.empty() ? std::string::npos : buf_.find(param_mid_json_);
          const size_t at = std::min(at_text, at_json);
          if (at == std::string::npos) {
            if (buf_.size() > 256 || end) return finish_args(out);
            return false;
          }
          const std::string key = buf_.substr(0, at);
          const bool json = at == at_json;
          consume(at + (json ? param_mid_json_ : param_mid_).size());
          value_is_string_ = param_mid_json_.empty() ? string_typed(key) : !json;
          emit(out, Kind::kArguments, (n_params_++ ? ", " : "{") + json_text(key) + ": " + (value_is_string_ ? "\"" : ""));
          param_ = Param::kValue;
          break;
        }
        case Param::kValue: {
          // A non-string value ends at the first param_after outside its strings (or, when the
          // reply ends inside one, at the first anywhere).
          size_t at = value_is_string_ ? buf_.find(param_after_) : find_outside_strings(buf_, param_after_);
          if (at == std::string::npos && end && !value_is_string_) at = buf_.find(param_after_);
          if (at == std::string::npos && !end) {
            if (value_is_string_) {  // stream all that cannot begin param_after, whole UTF-8 characters only
              size_t n = buf_.size() >= param_after_.size() ? buf_.size() - param_after_.size() + 1 : 0;
              while (n > 0 && n < buf_.size() && (static_cast<unsigned char>(buf_[n]) & 0xC0) == 0x80) --n;
              emit(out, Kind::kArguments, escaped(buf_.substr(0, n)));
              consume(n);
            }
            return false;
          }
          const size_t n = at == std::string::npos ? buf_.size() : at;
          if (value_is_string_) {
            emit(out, Kind::kArguments, escaped(buf_.substr(0, n)) + "\"");
          } else {
            emit(out, Kind::kArguments, json_value(buf_.substr(0, n)));
          }
          consume(at == std::string::npos ? n : n + param_after_.size());
          if (at == std::string::npos) return finish_args(out);
          param_ = Param::kNext;
          break;
        }
      }
    }
  }
  // The reply ended (or left the frame) inside the arguments: close what is open.
  bool finish_args(std::vector<ReplyEvent>& out) {
    emit(out, Kind::kArguments, n_params_ ? "}" : "{}");
    ++calls_read_;
    buf_.clear();
    mode_ = Mode::kContent;
    return true;
  }
  bool string_typed(const std::string& key) const {
    for (const Tool& t : tools_) {
      if (t.name != name_) continue;
      const nlohmann::ordered_json& p = t.parameters;
      if (!p.is_object() || !p.contains("properties") || !p["properties"].is_object() || !p["properties"].contains(key)) return true;
      const nlohmann::ordered_json& sub = p["properties"][key];
      if (!sub.is_object() || !sub.contains("type")) return true;
      const nlohmann::ordered_json& type = sub["type"];
      if (type.is_string()) return type.get<std::string>() == "string";
      if (type.is_array())
        for (const auto& x : type)
          if (x == "string") return true;
      return false;
    }
    return true;
  }
  static std::string json_text(const std::string& s) {
    return nlohmann::ordered_json(s).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  static std::string escaped(const std::string& s) {
    const std::string q = json_text(s);
    return q.substr(1, q.size() - 2);
  }
  // A non-string value as the template wrote it: JSON, or Python's literal (what `value |
  // string` and `{{ value }}` give: True, None, {'k': 1}), else the text as a string.
  static std::string json_value(const std::string& raw) {
    size_t b = 0, e = raw.size();
    while (b < e && is_ws(raw[b])) ++b;
    while (e > b && is_ws(raw[e - 1])) --e;
    const std::string v = raw.substr(b, e - b);
    if (v == "True") return "true";
    if (v == "False") return "false";
    if (v == "None") return "null";
    const auto j = nlohmann::ordered_json::parse(v, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) return v;
    if (auto p = python_literal(v)) return p->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    return json_text(raw);
  }

  void begin_call(const std::string& opening) {
    mode_ = Mode::kName;
    opening_ = opening;
    name_.clear(), id_.clear();
    extent_ = JsonExtent{}, args_begun_ = false;
    param_ = Param::kNext, n_params_ = 0;
  }
  void start_args(std::vector<ReplyEvent>& out) {
    if (id_.empty()) id_ = new_call_id(id_length_);
    out.push_back({.kind = Kind::kCallStart, .index = next_index_, .id = id_, .name = name_});
    index_ = next_index_++;
  }
  // The reply ended inside a call's opening (max_tokens): no call, and the opening, which is
  // the template's syntax and not the model's answer, is not content either.
  void cut_short() {
    mode_ = Mode::kContent;
    buf_.clear();
  }
  // What looked like a call's opening is not one: the opening read so far is content, and
  // what follows is read again as content (it may hold the next opening).
  void abandon(std::vector<ReplyEvent>& out) {
    mode_ = Mode::kContent;
    emit(out, Kind::kContent, opening_);
    opening_.clear();
  }

  inline static const std::string kEmpty;
  int32_t id_length_;
  bool calls_;
  int32_t max_calls_;
  std::vector<Tool> tools_;
  bool tagged_ = false;
  std::string param_before_, param_mid_, param_after_, param_mid_json_;
  Param param_ = Param::kNext;
  int32_t n_params_ = 0;
  bool value_is_string_ = true;
  std::string reasoning_open_, reasoning_close_, content_open_, start_, next_, suffix_, after_, mid_head_, mid_tail_;
  bool id_in_mid_ = false;
  Mode mode_;
  std::string buf_;
  bool content_started_ = false, reasoning_started_ = false, in_mark_ = false;
  std::string name_, id_;
  std::string opening_;  // the current call's opening as read (content again if it is not one)
  JsonExtent extent_;  // the arguments' value so far
  std::string args_quote_;  // arguments in the template's notation: its string quote (marked)
  NotationReader notation_{""};
  bool args_begun_ = false;
  int32_t calls_read_ = 0, next_index_ = 0, index_ = 0;
};

}  // namespace

std::unique_ptr<ReplyParser> framed_parser(const ToolCallSyntax& s, const ToolSet* tools, const constrain::SpecialTexts& specials) {
  const bool calls = tools != nullptr && tools->active() && (s.format == "framed" || s.format == "tagged");
  return std::make_unique<FramedParser>(s, calls, tools, specials);  // (tools: read, not kept)
}

void after_reasoning(const ToolCallSyntax& s, const constrain::SpecialTexts& sp, ReplyGrammar& g) {
  if (!s.has_reasoning() || !s.starts_in_reasoning) return;
  // The reasoning runs free; the grammar starts where it closes and must be reached.
  g.trigger = sp.mark(s.reasoning_close);
  g.framed->lead = g.trigger + "\n\n";
  g.required = true;
}

ReplyGrammar answer_grammar(const ToolCallSyntax& s, const nlohmann::ordered_json& schema,
                            const constrain::SpecialTexts& sp) {
  ReplyGrammar g;
  if (!s.has_reasoning() || !s.starts_in_reasoning) {
    g.schema = schema;
    return g;
  }
  constrain::FramedJson f;
  f.frames = {{FramePiece{.kind = FramePiece::Kind::kJson, .schema = schema}}};
  f.min_items = f.max_items = 1;
  g.framed = std::move(f);
  after_reasoning(s, sp, g);
  return g;
}

namespace {

// JSON Pointer's escapes for a property name ("~" and "/").
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// The tag that closes a parameter (the first "</...>" of param_after, else all of it): what a
// string value may not hold.
std::string closing_tag(const std::string& after) {
  const size_t open = after.find("</");
  if (open == std::string::npos) return after;
  const size_t close = after.find('>', open);
  return close == std::string::npos ? after.substr(open) : after.substr(open, close + 1 - open);
}

// A `tagged` call's arguments: the schema's properties in its order, each
// param_before KEY param_mid VALUE param_after, optional unless `required` names it; a string
// (or an enum of strings) as itself, any other value as JSON of its schema (or, python_values,
// as Python's str() prints it).
template <typename Mark>
void tagged_arguments(const ToolCallSyntax& s, const nlohmann::ordered_json& params, const Mark& m, std::vector<FramePiece>& frame) {
  if (!params.is_object() || !params.contains("properties") || !params["properties"].is_object()) return;
  std::vector<std::string> required;
  if (params.contains("required") && params["required"].is_array())
    for (const auto& r : params["required"])
      if (r.is_string()) required.push_back(r.template get<std::string>());
  for (const auto& [key, sub] : params["properties"].items()) {
    std::vector<FramePiece> group;
    group.push_back({.text = m(s.param_before + key + s.param_mid)});
    FramePiece value{.kind = FramePiece::Kind::kText, .text = closing_tag(m(s.param_after))};
    const bool typed_string = sub.is_object() && sub.contains("type") && sub["type"] == "string";
    bool string_enum = sub.is_object() && sub.contains("enum") && sub["enum"].is_array() && !sub["enum"].empty();
    if (string_enum)
      for (const auto& e : sub["enum"]) string_enum = string_enum && e.is_string();
    if (typed_string && sub.contains("maxLength") && sub["maxLength"].is_number_integer() && sub["maxLength"] > 0)
      value.length = static_cast<int32_t>(std::min<int64_t>(sub["maxLength"].template get<int64_t>(), 1 << 16));
    if (string_enum) {
      for (const auto& e : sub["enum"]) value.choices.push_back(e.template get<std::string>());
    } else if (!typed_string && sub.is_object() && sub.contains("type")) {
      value = {.kind = FramePiece::Kind::kJson, .schema = params, .pointer = "/properties/" + pointer_token(key)};
      if (s.python_values) value.notation = constrain::ValueNotation{.python = true};  // as str() prints it
    }
    if (value.kind == FramePiece::Kind::kJson && !s.param_mid_json.empty())
      group.front().text = m(s.param_before + key + s.param_mid_json);  // the frame's mark of a non-string
    group.push_back(std::move(value));
    group.push_back({.text = m(s.param_after)});
    if (std::find(required.begin(), required.end(), key) != required.end()) {
      for (FramePiece& p : group) frame.push_back(std::move(p));
    } else {
      frame.push_back({.kind = FramePiece::Kind::kOptional, .group = std::move(group)});
    }
  }
}

}  // namespace

ReplyGrammar framed_grammar(const ToolCallSyntax& s, const ToolSet& t, const constrain::SpecialTexts& sp) {
  const auto m = [&sp](const std::string& x) { return sp.mark(x); };
  // A literal with id slots as pieces.
  const auto literal = [&](const std::string& text, std::vector<FramePiece>& out) {
    size_t from = 0;
    for (size_t at; (at = text.find(kIdSlot, from)) != std::string::npos; from = at + 1) {
      if (at > from) out.push_back({.text = m(text.substr(from, at - from))});
      out.push_back({.kind = FramePiece::Kind::kAlnum, .length = s.id_length});
    }
    if (from < text.size()) out.push_back({.text = m(text.substr(from))});
  };
  ReplyGrammar g;
  constrain::FramedJson f;
  f.prefix = m(s.prefix), f.separator = m(s.separator), f.suffix = m(s.suffix);
  for (const Tool& tool : t.tools) {
    if (t.choice == ToolSet::Choice::kNamed && tool.name != t.named) continue;
    std::vector<FramePiece> frame;
    literal(s.before + tool.name + s.mid, frame);
    if (s.format == "tagged") {
      tagged_arguments(s, tool.parameters, m, frame);
    } else {
      FramePiece args{.kind = FramePiece::Kind::kJson, .schema = tool.parameters};
      if (!s.args_quote.empty()) args.notation = constrain::ValueNotation{.quote = m(s.args_quote), .sorted_keys = s.args_sorted};
      frame.push_back(std::move(args));
    }
    literal(s.after, frame);
    f.frames.push_back(std::move(frame));
  }
  f.max_items = t.parallel ? (s.max_calls > 0 ? s.max_calls : -1) : 1;
  g.framed = std::move(f);
  if (t.choice == ToolSet::Choice::kAuto && t.response_schema) {
    // Calls or an answer of response_format's schema, from the first token of the reply, or
    // from the close of the reasoning its generation prompt opened (after_reasoning).
    g.framed->answer = *t.response_schema;
    after_reasoning(s, sp, g);
    return g;
  }
  if (t.choice == ToolSet::Choice::kAuto) {
    // Lazy: the trigger is the call's opening up to its first whitespace (or id slot) after any; the
    // grammar starts where the trigger does (leading whitespace is the free text's).
    const std::string open = trim_left(s.prefix + s.before);
    g.trigger = m(open.substr(0, std::find_if(open.begin(), open.end(), [](char c) { return is_ws(c) || c == kIdSlot; }) - open.begin()));
    const size_t ws = s.prefix.size() + s.before.size() - open.size();
    if (ws > 0 && ws <= s.prefix.size()) {
      g.framed->prefix = m(s.prefix.substr(ws));
    } else if (ws > 0) {  // the frames' own `before` starts with it: later calls get it from the separator
      g.framed->separator = m(s.separator + s.before.substr(0, ws));
      for (auto& frame : g.framed->frames) frame.front().text = frame.front().text.substr(m(s.before.substr(0, ws)).size());
    }
    if (s.has_reasoning()) g.pause_open = m(s.reasoning_open), g.pause_close = m(s.reasoning_close), g.starts_paused = s.starts_in_reasoning;
  } else if (s.has_reasoning() && s.starts_in_reasoning) {
    // The generation prompt opened the reasoning: close it, then the calls.
    g.framed->prefix = m(s.reasoning_close) + "\n\n" + g.framed->prefix;
  }
  return g;
}

}  // namespace og::toolcall
