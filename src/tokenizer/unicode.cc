#include "tokenizer/unicode.h"

#include <array>
#include <optional>

#include <unicode/bytestream.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uniset.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

namespace og::tokenizer {
namespace {

// Valid range of the second byte of a multi-byte sequence (Unicode Table 3-7); the
// ranges exclude overlongs, surrogates and code points above U+10FFFF.
struct LeadInfo {
  uint8_t width, lo, hi;
};
LeadInfo lead_info(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Length of the valid sequence at s[i] (> 0), or minus the length of the maximal invalid
// subpart there, which String::from_utf8_lossy replaces with one U+FFFD.
ptrdiff_t sequence_at(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  const LeadInfo lead = lead_info(b0);
  if (lead.width == 0) return -1;
  for (size_t k = 1; k < lead.width; ++k) {
    if (i + k >= s.size()) return -static_cast<ptrdiff_t>(k);
    const auto b = static_cast<unsigned char>(s[i + k]);
    const bool ok = k == 1 ? (b >= lead.lo && b <= lead.hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return -static_cast<ptrdiff_t>(k);
  }
  return lead.width;
}

struct ByteTables {
  std::array<char32_t, 256> to_char{};
  std::array<std::string, 256> utf8;
  std::array<int16_t, 512> to_byte{};  // every alphabet character is below U+0200
  ByteTables() {
    to_byte.fill(-1);
    const auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); };
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      to_char[b] = printable(b) ? char32_t(b) : char32_t(256 + n++);
      append_utf8(utf8[b], to_char[b]);
      to_byte[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteTables& byte_tables() {
  static const ByteTables t;
  return t;
}

}  // namespace

size_t find_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) { ++i; continue; }
    const ptrdiff_t n = sequence_at(s, i);
    if (n < 0) return i;
    i += static_cast<size_t>(n);
  }
  return kValidUtf8;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const ptrdiff_t n = sequence_at(bytes, i);
    if (n > 0) {
      out.append(bytes.substr(i, static_cast<size_t>(n)));
      i += static_cast<size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";
      i += static_cast<size_t>(-n);
    }
  }
  return out;
}

char32_t byte_to_char(uint8_t b) { return byte_tables().to_char[b]; }
int byte_of_char(char32_t c) { return c < 512 ? byte_tables().to_byte[c] : -1; }
std::string_view byte_char_utf8(uint8_t b) { return byte_tables().utf8[b]; }

std::string to_byte_level(std::string_view s) {
  const ByteTables& t = byte_tables();
  std::string out;
  out.reserve(s.size() * 2);
  for (char ch : s) out += t.utf8[static_cast<uint8_t>(ch)];
  return out;
}

bool is_white_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const uint32_t mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  return (mask & (U_GC_ND_MASK | U_GC_NL_MASK | U_GC_NO_MASK)) != 0;
}

bool is_regex_word_char(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  const auto u = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(u, UCHAR_ALPHABETIC) || u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL)) return true;
  return (U_GET_GC_MASK(u) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

bool is_combining_mark(char32_t c) {
  // tokenizers' StripAccents asks unicode-normalization-alignments, whose tables are Unicode
  // 9.0's (normalize_unicode): a mark assigned later is no mark there.
  if (c < 0x300 || (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_M_MASK) == 0) return false;
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] <= 9;
}

namespace {

// HuggingFace tokenizers normalizes with the tables of the unicode-normalization-alignments
// crate, which are Unicode 9.0's: a character assigned later has no decomposition and no
// combining class there, so it passes through and blocks composition across it (measured
// against the pinned binding: "e" U+0C3C U+0301 stays three characters, where Unicode 14
// composes é). ICU's normalizer filtered to the characters of Unicode <= 9.0 does exactly
// that (the mechanism ICU itself uses for IDNA's Unicode 3.2 normalization); normalization of
// assigned characters is stable across versions, so the rest is the same.
struct Unicode9Normalizers {
  UErrorCode err = U_ZERO_ERROR;  // first: the set's constructor reads and sets it
  icu::UnicodeSet assigned;
  std::optional<icu::FilteredNormalizer2> nfc, nfd, nfkc, nfkd;
  Unicode9Normalizers() : assigned(icu::UnicodeString(u"[:age=9.0:]"), err) {
    if (U_FAILURE(err)) return;
    assigned.freeze();
    const auto make = [&](const icu::Normalizer2* n, std::optional<icu::FilteredNormalizer2>& out) {
      if (U_SUCCESS(err) && n != nullptr) out.emplace(*n, assigned);
    };
    make(icu::Normalizer2::getNFCInstance(err), nfc);
    make(icu::Normalizer2::getNFDInstance(err), nfd);
    make(icu::Normalizer2::getNFKCInstance(err), nfkc);
    make(icu::Normalizer2::getNFKDInstance(err), nfkd);
  }
};

}  // namespace

Result<std::string> normalize_unicode(std::string_view s, NormalForm form) {
  static const Unicode9Normalizers normalizers;
  UErrorCode err = normalizers.err;
  const std::optional<icu::FilteredNormalizer2>* chosen = nullptr;
  switch (form) {
    case NormalForm::kNfc: chosen = &normalizers.nfc; break;
    case NormalForm::kNfd: chosen = &normalizers.nfd; break;
    case NormalForm::kNfkc: chosen = &normalizers.nfkc; break;
    case NormalForm::kNfkd: chosen = &normalizers.nfkd; break;
  }
  if (U_FAILURE(err) || chosen == nullptr || !chosen->has_value())
    return Status(ErrorCode::kInternal, fmt::format("ICU normalizer unavailable: {}", u_errorName(err)));
  const icu::Normalizer2* n = &**chosen;
  const icu::StringPiece piece(s.data(), static_cast<int32_t>(s.size()));
  // Most text is already normalized; the quick check avoids a copy through ICU.
  if (n->isNormalizedUTF8(piece, err) && U_SUCCESS(err)) return std::string(s);
  err = U_ZERO_ERROR;
  std::string out;
  icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(s.size()));
  n->normalizeUTF8(0, piece, sink, nullptr, err);
  if (U_FAILURE(err)) return Status(ErrorCode::kInternal, fmt::format("ICU normalization failed: {}", u_errorName(err)));
  return out;
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t c = next_char(s, i);
    if (c < 0x80) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
      continue;
    }
    // One character at a time: Rust maps each char without context (no final-sigma rule).
    icu::UnicodeString one(static_cast<UChar32>(c));
    one.toLower(icu::Locale::getRoot());
    one.toUTF8String(out);
  }
  return out;
}

}  // namespace og::tokenizer
