// Python's str semantics on UTF-8 bytes, as far as chat templates can observe them.
//
// Jinja runs on Python str (code points), so len(), slicing, strip() and split() count and
// cut code points, and "whitespace" is Python's str.isspace() set (it includes U+3000 and
// U+00A0, which a byte-level strip would keep). Strings stay UTF-8 everywhere else;
// these helpers decode only where a code point boundary matters. Case mapping is ASCII only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"  // append_utf8, encode_utf8

namespace og::chat {

std::u32string utf8_decode(std::string_view s);  // invalid bytes become U+FFFD
size_t utf8_length(std::string_view s);

bool py_isspace(char32_t c);
bool py_isprintable(char32_t c);  // approximates Python's table: controls, separators, format chars

// str.strip / lstrip / rstrip; `chars` absent means whitespace.
std::string py_strip(std::string_view s, const std::optional<std::string>& chars, bool left,
                     bool right);
// str.split(sep, maxsplit) and str.rsplit; sep absent means runs of whitespace.
std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep,
                                  int64_t maxsplit, bool from_right);
// str.replace(old, new, count); an empty `old` inserts `new` around every code point.
std::string py_replace(std::string_view s, std::string_view old, std::string_view repl,
                       int64_t count);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_title(std::string_view s);
std::string py_capitalize(std::string_view s);
// repr() of a str: quotes chosen and characters escaped as Python does.
std::string py_repr_string(std::string_view s);
// repr() of a float: shortest round-trip digits, exponent outside [1e-4, 1e16).
std::string py_float_repr(double x);

// Python slice indices for a sequence of length n (PySlice_AdjustIndices).
struct SliceIndices {
  int64_t start, stop, step, count;
};
SliceIndices adjust_slice(std::optional<int64_t> start, std::optional<int64_t> stop,
                          std::optional<int64_t> step, int64_t n);

}  // namespace og::chat
