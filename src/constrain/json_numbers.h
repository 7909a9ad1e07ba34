// Numbers between bounds as grammars (minimum, maximum, exclusiveMinimum, exclusiveMaximum):
// decimal digit strings compared digit by digit, so a bounded integer is written only where it
// lies inside its range, with no leading zeros and at most 16 digits.
#pragma once

#include <optional>

#include "constrain/grammar.h"

namespace og::constrain {

struct NumberBounds {
  std::optional<double> lo, hi;  // absent: unbounded on that side
  bool lo_exclusive = false, hi_exclusive = false;
};

// The JSON numbers (integers when `integer`) within `b`. A number's bounds must be integers
// (a fractional bound on a non-integer is refused: kUnsupported naming it); an integer's
// may be any number. Bounded numbers are written without an exponent.
Result<ExprPtr> bounded_number(const NumberBounds& b, bool integer);

}  // namespace og::constrain
