// Decoders (tokenizers' decoders/*.rs and the ByteLevel / Metaspace decoders): each step
// maps the list of token strings to a new list (decode_chain); the result is joined.
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {
namespace {

std::vector<std::string> byte_level(const std::vector<std::string>& tokens) {
  std::string bytes;
  for (const std::string& t : tokens) {
    // A token with any character outside the byte alphabet contributes its raw UTF-8.
    const size_t start = bytes.size();
    bool all_mapped = true;
    for (size_t i = 0; i < t.size() && all_mapped;) {
      const int b = byte_of_char(next_char(t, i));
      if (b < 0) all_mapped = false;
      else bytes.push_back(static_cast<char>(b));
    }
    if (!all_mapped) bytes.resize(start), bytes += t;
  }
  return {utf8_lossy(bytes)};
}

// u8::from_str_radix(s, 16) on two characters: an optional '+' then hex digits.
int parse_hex_byte(std::string_view s) {
  if (s[0] == '+') s.remove_prefix(1);
  int v = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::vector<std::string> byte_fallback(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string pending;  // bytes of consecutive <0xNN> tokens
  const auto flush = [&] {
    if (pending.empty()) return;
    if (find_invalid_utf8(pending) == kValidUtf8) out.push_back(pending);
    else out.insert(out.end(), pending.size(), "\xEF\xBF\xBD");  // one U+FFFD per byte
    pending.clear();
  };
  for (const std::string& t : tokens) {
    const int b = (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t.back() == '>') ? parse_hex_byte(std::string_view(t).substr(3, 2)) : -1;
    if (b >= 0) {
      pending.push_back(static_cast<char>(b));
      continue;
    }
    flush();
    out.push_back(t);
  }
  flush();
  return out;
}

std::vector<std::string> strip(const std::vector<std::string>& tokens, const DecoderStep& s) {
  std::vector<std::string> out;
  for (const std::string& t : tokens) {
    std::vector<std::pair<size_t, char32_t>> chars;  // (byte offset, character)
    for (size_t i = 0; i < t.size();) {
      const size_t at = i;
      chars.emplace_back(at, next_char(t, i));
    }
    size_t start_cut = 0, stop_cut = chars.size();
    for (size_t i = 0; i < s.strip_start && i < chars.size() && chars[i].second == s.strip_char; ++i) start_cut = i + 1;
    for (size_t i = 0; i < s.strip_stop && i < chars.size() && chars[chars.size() - 1 - i].second == s.strip_char; ++i)
      stop_cut = chars.size() - 1 - i;
    if (start_cut >= stop_cut) {
      out.emplace_back();
      continue;
    }
    const size_t begin = chars[start_cut].first;
    const size_t end = stop_cut < chars.size() ? chars[stop_cut].first : t.size();
    out.push_back(t.substr(begin, end - begin));
  }
  return out;
}

std::vector<std::string> metaspace(const std::vector<std::string>& tokens, const DecoderStep& s) {
  std::vector<std::string> out;
  for (size_t k = 0; k < tokens.size(); ++k) {
    std::string text;
    for (size_t i = 0; i < tokens[k].size();) {
      const char32_t c = next_char(tokens[k], i);
      if (c != s.replacement) append_utf8(text, c);
      else if (k != 0 || s.prepend_scheme == PrependScheme::kNever) text += ' ';
    }
    out.push_back(std::move(text));
  }
  return out;
}

// A Replace step on one token (a regex that fails here, on resource limits, leaves it unchanged).
void replace_all(const Matcher& m, const std::string& content, std::string& t, std::vector<Span>& spans) {
  if (!m.find_matches(t, spans).is_ok()) return;
  std::string replaced;
  for (const Span& sp : spans) {
    if (sp.is_match) replaced += content;
    else replaced.append(t, sp.begin, sp.end - sp.begin);
  }
  t = std::move(replaced);
}

}  // namespace

Status Decoder::init(const std::vector<DecoderStep>& steps, bool has_decoder) {
  steps_spec_ = &steps;
  has_decoder_ = has_decoder;
  matchers_.clear();
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].kind != DecoderStep::Kind::kReplace) {
      matchers_.push_back(Matcher::literal(""));
      continue;
    }
    if (steps[k].pattern.text.empty()) return bad_input("tokenizer: decoder step {}: Replace with an empty pattern", k);
    OG_ASSIGN_OR_RETURN(Matcher m, compile_pattern(steps[k].pattern, fmt::format("decoder step {} (Replace)", k)));
    matchers_.push_back(std::move(m));
  }
  return Status::ok();
}

std::string Decoder::token_bytes(const std::string& token) const {
  using K = DecoderStep::Kind;
  if (!has_decoder_) return token;
  std::string t = token;
  bool fused = false;  // after a Fuse, Strip cuts the ends of the whole text, not of this token
  std::vector<Span> spans;
  for (size_t k = 0; k < matchers_.size(); ++k) {
    const DecoderStep& s = (*steps_spec_)[k];
    switch (s.kind) {
      case K::kByteLevel: {  // raw bytes, kept even when they are part of a UTF-8 character
        std::string bytes;
        bool all_mapped = true;
        for (size_t i = 0; i < t.size() && all_mapped;) {
          const int b = byte_of_char(next_char(t, i));
          if (b < 0) all_mapped = false;
          else bytes.push_back(static_cast<char>(b));
        }
        if (all_mapped) t = std::move(bytes);
        break;
      }
      case K::kByteFallback: {
        const int b = (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t.back() == '>') ? parse_hex_byte(std::string_view(t).substr(3, 2)) : -1;
        if (b >= 0) t.assign(1, static_cast<char>(b));
        break;
      }
      case K::kStrip:
        if (!fused) t = strip({t}, s)[0];
        break;
      case K::kMetaspace: {  // not the first token: the replacement is a space
        std::string text;
        for (size_t i = 0; i < t.size();) {
          const char32_t c = next_char(t, i);
          if (c != s.replacement) append_utf8(text, c);
          else text += ' ';
        }
        t = std::move(text);
        break;
      }
      case K::kFuse: fused = true; break;
      case K::kReplace:
        replace_all(matchers_[k], s.content, t, spans);
        break;
    }
  }
  return t;
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  using K = DecoderStep::Kind;
  if (!has_decoder_) {
    std::string joined;
    for (size_t k = 0; k < tokens.size(); ++k) joined += (k ? " " : "") + tokens[k];
    return joined;
  }
  std::vector<Span> spans;
  for (size_t k = 0; k < matchers_.size(); ++k) {
    const DecoderStep& s = (*steps_spec_)[k];
    switch (s.kind) {
      case K::kByteLevel: tokens = byte_level(tokens); break;
      case K::kByteFallback: tokens = byte_fallback(tokens); break;
      case K::kStrip: tokens = strip(tokens, s); break;
      case K::kMetaspace: tokens = metaspace(tokens, s); break;
      case K::kFuse: {
        std::string joined;
        for (const std::string& t : tokens) joined += t;
        tokens.assign(1, std::move(joined));
        break;
      }
      case K::kReplace:
        for (std::string& t : tokens) replace_all(matchers_[k], s.content, t, spans);
        break;
    }
  }
  std::string joined;
  for (const std::string& t : tokens) joined += t;
  return joined;
}

}  // namespace og::tokenizer
