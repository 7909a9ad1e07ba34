// JSON values as a chat template writes them when it writes no JSON: a tool call's arguments
// in the template's own notation, e.g.  {city:<|"|>Paris<|"|>,days:[1,2],metric:true}.
// Strings stand between `quote` as their raw text (no escapes), object keys are bare, nothing
// separates the pieces but ',' and ':', and members come sorted by key when the template sorts
// them (jinja's dictsort: case-insensitive, stable); numbers, true, false and null as in JSON.
// Or Python's str() of the value (`python`), as templates that print a value write it.
// Learnt from a template by rendering probes (toolcall/detect.h); this layer knows text only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace og::constrain {

struct ValueNotation {
  std::string quote;         // before and after every string (non-empty)
  bool sorted_keys = false;  // members ordered as dictsort orders them
  // Python's str() of the value instead (what `{{ value }}` prints): strings quoted as repr
  // quotes them, with its escapes, keys as strings, ", " and ": " between the pieces, True,
  // False and None; `quote` is not used.
  bool python = false;

  bool operator==(const ValueNotation&) const = default;
};

// The text of `v` in notation `n`.
std::string notation_text(const nlohmann::ordered_json& v, const ValueNotation& n);

// Python's repr of a string: in single quotes unless it holds one and no double quote, with
// \\, the quote, \n, \r, \t and \xHH (other controls) escaped.
std::string python_string_repr(const std::string& s);

// `keys` in the order the notation writes them (unchanged unless sorted_keys).
std::vector<std::string> notation_key_order(std::vector<std::string> keys, const ValueNotation& n);

}  // namespace og::constrain
