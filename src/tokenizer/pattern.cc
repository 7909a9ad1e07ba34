#include "tokenizer/pattern.h"

#include <algorithm>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tokenizer/unicode.h"

namespace og::tokenizer {
namespace {

// Oniguruma's Unicode classes (its RE doc): \s is 0009-000D, 0085 and Z*; PCRE2's UCP \s
// also takes U+180E. \w is L, M, Nd, Pc; PCRE2 10.42's UCP \w lacks M. \h is a hex digit
// in Oniguruma but horizontal space in PCRE2.
constexpr std::string_view kOnigSpace = "\\t-\\r\\x{85}\\p{Z}";
constexpr std::string_view kOnigWord = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";
constexpr std::string_view kOnigHex = "0-9a-fA-F";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof(buf));
  return reinterpret_cast<const char*>(buf);
}

// One match data block and JIT stack per thread, shared by every Regex: a match never
// runs inside another on the same thread. The JIT stack grows to 64 MiB for long runs.
struct ThreadMatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
  ThreadMatchState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadMatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

}  // namespace

Result<std::string> onig_to_pcre2(const std::string& p) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[++i];
      const char lower = static_cast<char>(n | 0x20);
      std::string_view set = lower == 's' ? kOnigSpace : lower == 'w' ? kOnigWord : lower == 'h' ? kOnigHex : "";
      if (set.empty()) {
        out += c;
        out += n;
      } else if (!in_class) {
        out += (n == lower) ? "[" : "[^";
        out += set;
        out += ']';
      } else if (n == lower) {
        out += set;
      } else {
        return unsupported("regex '{}': negated class \\{} inside [...] is not supported", p, n);
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];  // a leading ']' is literal
      continue;
    }
    if (in_class && c == '[') {
      if (i + 1 < p.size() && p[i + 1] == ':') {  // POSIX bracket [:alpha:]
        const size_t close = p.find(":]", i + 2);
        if (close == std::string::npos) return bad_input("regex '{}': unterminated [: in a class", p);
        out.append(p, i, close + 2 - i);
        i = close + 1;
        continue;
      }
      return unsupported("regex '{}': nested character classes (Oniguruma set operations) are not supported", p);
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

Result<std::shared_ptr<const Regex>> Regex::compile(const std::string& pattern, const std::string& where) {
  OG_ASSIGN_OR_RETURN(std::string translated, onig_to_pcre2(pattern));
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (code == nullptr)
    return bad_input("{}: regex '{}' does not compile: {} (at offset {})", where, pattern, pcre2_message(error), offset);
  // JIT is an optimisation; the interpreter gives the same matches when it is unavailable.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  std::shared_ptr<Regex> re(new Regex());
  re->code_ = code;
  re->pattern_ = pattern;
  return std::shared_ptr<const Regex>(std::move(re));
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

Status Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  thread_local ThreadMatchState state;
  auto* code = static_cast<const pcre2_code*>(code_);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  bool matched_before = false;
  size_t last_end = 0;
  while (pos <= text.size()) {
    const int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return bad_input("regex '{}' failed on a {}-byte text: {}", pattern_, text.size(), pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
    const size_t begin = ov[0], end = ov[1];
    if (begin == end && matched_before && last_end == end) {
      if (pos >= text.size()) break;
      pos += utf8_length(static_cast<unsigned char>(text[pos]));
      continue;
    }
    out.emplace_back(begin, end);
    matched_before = true;
    last_end = end;
    pos = end;
  }
  return Status::ok();
}

Matcher Matcher::literal(std::string s) {
  Matcher m;
  m.kind_ = Kind::kLiteral;
  m.literal_ = std::move(s);
  return m;
}
Matcher Matcher::regex(std::shared_ptr<const Regex> re) {
  Matcher m;
  m.kind_ = Kind::kRegex;
  m.regex_ = std::move(re);
  return m;
}
Matcher Matcher::char_class(CharClass c) {
  Matcher m;
  m.kind_ = Kind::kClass;
  m.class_ = c;
  return m;
}
Matcher Matcher::single_char(char32_t c) {
  Matcher m;
  m.kind_ = Kind::kChar;
  m.char_ = c;
  return m;
}

Status Matcher::find_matches(std::string_view text, std::vector<Span>& out) const {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return Status::ok();
  }
  std::vector<std::pair<size_t, size_t>> hits;
  if (kind_ == Kind::kRegex) {
    OG_TRY(regex_->find_all(text, hits));
  } else if (kind_ == Kind::kLiteral && literal_.empty()) {
    // tokenizers escapes the literal into a regex; "" matches empty at every boundary.
    for (size_t i = 0; i < text.size(); i += utf8_length(static_cast<unsigned char>(text[i]))) hits.emplace_back(i, i);
    hits.emplace_back(text.size(), text.size());
  } else if (kind_ == Kind::kLiteral) {
    for (size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at + literal_.size()))
      hits.emplace_back(at, at + literal_.size());
  } else {
    for (size_t i = 0; i < text.size();) {
      const size_t start = i;
      const char32_t c = next_char(text, i);
      const bool hit = kind_ == Kind::kChar ? c == char_
                       : class_ == CharClass::kWhiteSpace ? is_white_space(c) : is_numeric(c);
      if (hit) hits.emplace_back(start, i);
    }
  }
  size_t prev = 0;
  for (const auto& [begin, end] : hits) {
    if (prev != begin) out.push_back({prev, begin, false});
    out.push_back({begin, end, true});
    prev = end;
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
  return Status::ok();
}

std::vector<std::pair<size_t, size_t>> split_spans(std::vector<Span> spans, SplitBehavior behavior, bool invert) {
  if (invert)
    for (Span& s : spans) s.is_match = !s.is_match;
  std::vector<Span> kept;  // is_match here means "remove"
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const Span& s : spans) kept.push_back({s.begin, s.end, false});
      break;
    case SplitBehavior::kRemoved:
      kept = spans;
      break;
    case SplitBehavior::kContiguous:
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !kept.empty()) kept.back().end = s.end;
        else kept.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !kept.empty()) kept.back().end = s.end;
        else kept.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty()) kept.back().begin = it->begin;
        else kept.push_back({it->begin, it->end, false});
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  std::vector<std::pair<size_t, size_t>> pieces;
  for (const Span& s : kept)
    if (!s.is_match && s.end > s.begin) pieces.emplace_back(s.begin, s.end);
  return pieces;
}

}  // namespace og::tokenizer
