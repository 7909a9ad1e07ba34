#include "toolcall/notation_reader.h"

#include <nlohmann/json.hpp>

namespace og::toolcall {
namespace {

using ojson = nlohmann::ordered_json;

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
std::string json_string(std::string_view s) {
  return ojson(std::string(s)).dump(-1, ' ', false, ojson::error_handler_t::replace);
}
// A bare scalar as JSON: a number, a literal (JSON's or Python's), else the text as a string.
std::string scalar(std::string_view raw) {
  size_t b = 0, e = raw.size();
  while (b < e && is_ws(raw[b])) ++b;
  while (e > b && is_ws(raw[e - 1])) --e;
  const std::string v(raw.substr(b, e - b));
  if (v == "true" || v == "True") return "true";
  if (v == "false" || v == "False") return "false";
  if (v == "null" || v == "None") return "null";
  const ojson j = ojson::parse(v, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.is_number()) return j.dump();
  return json_string(v);
}
// How many bytes at the end of `s` could begin `lit` (to hold back while streaming).
size_t partial_suffix(std::string_view s, std::string_view lit) {
  for (size_t n = std::min(s.size(), lit.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == lit.substr(0, n)) return n;
  return 0;
}
// Bytes at the end of `s` that begin an unfinished UTF-8 character.
size_t partial_utf8(std::string_view s) {
  for (size_t n = 1; n <= std::min<size_t>(3, s.size()); ++n) {
    const auto c = static_cast<unsigned char>(s[s.size() - n]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return len > n ? n : 0;
  }
  return 0;
}

}  // namespace

bool NotationReader::begin_item(std::string& out) {
  if (comma_) out += ',';
  comma_ = false;
  colon_ = false;
  first_ = false;
  return true;
}

size_t NotationReader::read(std::string_view text, bool end, std::string& out) {
  size_t i = 0;
  while (i < text.size() && !done_) {
    const char c = text[i];
    switch (state_) {
      case State::kString: {
        const size_t at = text.find(quote_, i);
        if (at == std::string_view::npos) {
          std::string_view rest = text.substr(i);
          if (!end) rest.remove_suffix(std::max(partial_suffix(rest, quote_), partial_utf8(rest)));
          const std::string q = json_string(rest);
          out += q.substr(1, q.size() - 2);
          i += rest.size();
          if (!end) return i;
          break;
        }
        const std::string q = json_string(text.substr(i, at - i));
        out += q.substr(1);  // with its closing quote
        i = at + quote_.size();
        if (key_) {
          out += ':';
          key_ = false;
          colon_ = true;  // the ':' after a quoted key is still to come
          state_ = State::kValue;
        } else {
          state_ = State::kAfter;
        }
        break;
      }
      case State::kValue:
      case State::kKey: {
        if (is_ws(c) || (colon_ && c == ':')) {
          colon_ = colon_ && c != ':';
          ++i;
          break;
        }
        const bool in_object = state_ == State::kKey;
        if (first_ && !open_.empty() && c == (in_object ? '}' : ']')) {  // an empty container
          state_ = State::kAfter;
          break;
        }
        if (text.substr(i).starts_with(quote_) || (quote_.starts_with(text.substr(i)) && !end)) {
          if (!text.substr(i).starts_with(quote_)) return i;  // the quote, cut short: wait
          begin_item(out);
          out += '"';
          i += quote_.size();
          key_ = in_object;
          state_ = State::kString;
          break;
        }
        if (in_object) {  // a bare key, up to its ':'
          const size_t colon = text.find(':', i);
          if (colon == std::string_view::npos) {
            if (!end && text.size() - i <= 256) return i;
            done_ = true;  // no key after all: close what is open
            close(out);
            return text.size();
          }
          begin_item(out);
          out += json_string(text.substr(i, colon - i)) + ':';
          i = colon + 1;
          state_ = State::kValue;
          break;
        }
        if (c == '{' || c == '[') {
          begin_item(out);
          out += c;
          open_.push_back(c);
          first_ = true;
          state_ = c == '{' ? State::kKey : State::kValue;
          ++i;
          break;
        }
        // A bare scalar, up to what ends it.
        size_t e = i;
        while (e < text.size() && text[e] != ',' && text[e] != '}' && text[e] != ']') ++e;
        if (e == text.size() && !end) return i;
        begin_item(out);
        out += scalar(text.substr(i, e - i));
        i = e;
        state_ = State::kAfter;
        break;
      }
      case State::kAfter: {
        if (is_ws(c)) {
          ++i;
          break;
        }
        if (open_.empty()) {
          done_ = true;
          break;
        }
        if (c == ',') {
          comma_ = true;
          state_ = open_.back() == '{' ? State::kKey : State::kValue;
          ++i;
          break;
        }
        if (c == (open_.back() == '{' ? '}' : ']')) {
          out += c;
          open_.pop_back();
          first_ = false;
          ++i;
          if (open_.empty()) done_ = true;
          break;
        }
        done_ = true;  // not the notation: close what is open
        close(out);
        return i;
      }
    }
    if (state_ == State::kAfter && open_.empty()) done_ = true;
  }
  return i;
}

void NotationReader::close(std::string& out) {
  if (state_ == State::kString) {
    out += '"';
    if (key_) out += ":null";
  } else if (state_ == State::kValue && !open_.empty() && open_.back() == '{' && !first_ && !comma_) {
    out += "null";  // a key without its value
  }
  for (size_t k = open_.size(); k-- > 0;) out += open_[k] == '{' ? '}' : ']';
  open_.clear();
  state_ = State::kAfter;
  done_ = true;
}

}  // namespace og::toolcall
