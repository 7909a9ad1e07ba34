// UTF-8 and Unicode helpers for the tokenizer, with the exact semantics of the Rust code
// HuggingFace `tokenizers` is built from: strict validation like `std::str::from_utf8`,
// replacement like `String::from_utf8_lossy`, character classes like Rust's `char` methods
// and `regex` crate (ICU supplies the Unicode properties), and GPT-2's byte-to-char table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/utf8.h"  // append_utf8

namespace og::tokenizer {

inline constexpr size_t kValidUtf8 = static_cast<size_t>(-1);

// Offset of the first byte that is not part of a valid UTF-8 sequence (overlongs,
// surrogates and code points above U+10FFFF are invalid), or kValidUtf8.
size_t find_invalid_utf8(std::string_view s);

// Replaces every maximal invalid subsequence with U+FFFD, as String::from_utf8_lossy does.
std::string utf8_lossy(std::string_view bytes);

// Decodes the character starting at s[i] (s must be valid UTF-8) and advances i past it.
inline char32_t next_char(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) { ++i; return b0; }
  const auto cont = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]) & 0x3F); };
  char32_t c;
  if (b0 < 0xE0) { c = (char32_t(b0 & 0x1F) << 6) | cont(1); i += 2; }
  else if (b0 < 0xF0) { c = (char32_t(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2); i += 3; }
  else { c = (char32_t(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3); i += 4; }
  return c;
}

// Byte length of the character whose first byte is b (1 for stray continuation bytes).
inline size_t utf8_length(unsigned char b) { return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }


// GPT-2 byte-level alphabet: every byte maps to one printable character.
char32_t byte_to_char(uint8_t b);
// The inverse; -1 for characters outside the alphabet.
int byte_of_char(char32_t c);
// UTF-8 of byte_to_char(b).
std::string_view byte_char_utf8(uint8_t b);
// Maps every byte of `s` to its byte-level character (ByteLevel pre-tokenizer/normalizer).
std::string to_byte_level(std::string_view s);

// Character classes, matching the Rust definitions tokenizers uses.
bool is_white_space(char32_t c);        // char::is_whitespace, regex `\s`: White_Space
bool is_numeric(char32_t c);            // char::is_numeric: Nd, Nl, No
bool is_regex_word_char(char32_t c);    // regex crate `\w`: Alphabetic, M, Nd, Pc, Join_Control
bool is_combining_mark(char32_t c);     // general category M, of the characters of Unicode <= 9.0

enum class NormalForm : uint8_t { kNfc, kNfd, kNfkc, kNfkd };
// Unicode normalization of valid UTF-8 (ICU); errors only if ICU itself fails.
Result<std::string> normalize_unicode(std::string_view s, NormalForm form);
// Full, context-free lowercase of every character, like Rust's char::to_lowercase.
std::string lowercase(std::string_view s);

}  // namespace og::tokenizer
