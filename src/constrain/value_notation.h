// JSON values as a chat template writes them when it writes no JSON: a tool call's arguments
// in the template's own notation, e.g.  {city:<|"|>Paris<|"|>,days:[1,2],metric:true}.
// Strings stand between `quote` as their raw text (no escapes), object keys are bare, nothing
// separates the pieces but ',' and ':', and members come sorted by key when the template sorts
// them (jinja's dictsort: case-insensitive, stable); numbers, true, false and null as in JSON.
// Learnt from a template by rendering probes (toolcall/detect.h); this layer knows text only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace og::constrain {

struct ValueNotation {
  std::string quote;         // before and after every string (non-empty)
  bool sorted_keys = false;  // members ordered as dictsort orders them

  bool operator==(const ValueNotation&) const = default;
};

// The text of `v` in notation `n`.
std::string notation_text(const nlohmann::ordered_json& v, const ValueNotation& n);

// `keys` in the order the notation writes them (unchanged unless sorted_keys).
std::vector<std::string> notation_key_order(std::vector<std::string> keys, const ValueNotation& n);

}  // namespace og::constrain
