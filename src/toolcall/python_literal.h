// Python literals as JSON: what a chat template prints for a non-string argument with
// `{{ value }}` (Python's str(): {'k': 1}, [True, None], 'it\'s'), read back as the JSON value
// it stands for. Only literals: dicts, lists, tuples, strings, numbers, True, False, None.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace og::toolcall {

// The value `text` (surrounding whitespace allowed) spells, or nullopt when it is not exactly
// one Python literal.
std::optional<nlohmann::ordered_json> python_literal(std::string_view text);

}  // namespace og::toolcall
