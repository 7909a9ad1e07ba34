#include "constrain/json_numbers.h"

#include <cmath>
#include <string>

namespace og::constrain {
namespace {

constexpr int64_t kMax = 9'999'999'999'999'999;  // 16 digits: the integer rule's bound

ExprPtr digit(char lo = '0', char hi = '9') { return byte_ranges({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}}); }

// Digit strings of equal length n with a <= x <= b, leading zeros allowed (a suffix).
ExprPtr same_length(const std::string& a, const std::string& b) {
  if (a.empty()) return seq({});
  // Every string of the length: one repeat (recursing would double the work per digit).
  if (a.find_first_not_of('0') == std::string::npos && b.find_first_not_of('9') == std::string::npos)
    return repeat(digit(), static_cast<int32_t>(a.size()), static_cast<int32_t>(a.size()));
  if (a[0] == b[0]) return seq({digit(a[0], a[0]), same_length(a.substr(1), b.substr(1))});
  const size_t rest = a.size() - 1;
  std::vector<ExprPtr> alts{seq({digit(a[0], a[0]), same_length(a.substr(1), std::string(rest, '9'))})};
  if (a[0] + 1 <= b[0] - 1) alts.push_back(seq({digit(static_cast<char>(a[0] + 1), static_cast<char>(b[0] - 1)), repeat(digit(), static_cast<int32_t>(rest), static_cast<int32_t>(rest))}));
  alts.push_back(seq({digit(b[0], b[0]), same_length(std::string(rest, '0'), b.substr(1))}));
  return alt(std::move(alts));
}

// The decimal texts of the integers in [a, b] (0 <= a; b < 0: up to kMax), no leading zeros.
ExprPtr uint_range(int64_t a, int64_t b) {
  if (b < 0 || b > kMax) b = kMax;
  if (a > b) return alt({});
  std::vector<ExprPtr> alts;
  const std::string sa = std::to_string(a), sb = std::to_string(b);
  for (size_t len = sa.size(); len <= sb.size(); ++len) {
    const int64_t first = len == 1 ? 0 : static_cast<int64_t>(std::pow(10.0, static_cast<double>(len - 1)));
    const int64_t last = len >= 16 ? kMax : static_cast<int64_t>(std::pow(10.0, static_cast<double>(len))) - 1;
    const int64_t lo = std::max(a, first), hi = std::min(b, last);
    if (lo <= hi) alts.push_back(same_length(std::to_string(lo), std::to_string(hi)));
  }
  return alt(std::move(alts));
}

const ExprPtr& any_fraction() {
  static const ExprPtr f = seq({byte_ranges({{'.', '.'}}), repeat(digit(), 1, 16)});
  return f;
}

// A fraction that is not zero: '.' digits with some digit 1-9.
const ExprPtr& nonzero_fraction() {
  static const ExprPtr f = seq({byte_ranges({{'.', '.'}}), repeat(digit('0', '0'), 0, 15), digit('1', '9'), repeat(digit(), 0, 15)});
  return f;
}

// y in [low, high] (or (low, ...) / (..., high) when exclusive), y >= 0, no high: unbounded.
ExprPtr magnitude(int64_t low, bool low_excl, std::optional<int64_t> high, bool high_excl, bool integer) {
  if (integer) return uint_range(low, high ? *high : -1);  // bounds already inclusive integers
  std::vector<ExprPtr> alts;
  // Integer part strictly inside: any fraction.
  const int64_t from = low + (low_excl ? 1 : 0);
  if (!high) alts.push_back(seq({uint_range(from, -1), opt(any_fraction())}));
  else if (from <= *high - 1) alts.push_back(seq({uint_range(from, *high - 1), opt(any_fraction())}));
  // Just above an exclusive low: its integer part with a fraction that is not zero.
  if (low_excl && (!high || *high >= low + 1)) alts.push_back(seq({uint_range(low, low), nonzero_fraction()}));
  // The high bound itself, when included, with only zeros after the point.
  if (high && !high_excl && (*high > low || (*high == low && !low_excl)))
    alts.push_back(seq({uint_range(*high, *high), opt(seq({byte_ranges({{'.', '.'}}), repeat(digit('0', '0'), 1, 16)}))}));
  return alt(std::move(alts));
}

}  // namespace

Result<ExprPtr> bounded_number(const NumberBounds& b, bool integer) {
  std::optional<int64_t> lo, hi;
  bool lo_excl = b.lo_exclusive, hi_excl = b.hi_exclusive;
  const auto clamp = [](double v) { return static_cast<int64_t>(std::max<double>(-kMax - 1.0, std::min<double>(kMax + 1.0, v))); };
  if (b.lo) {
    if (!std::isfinite(*b.lo)) return bad_input("a bound must be a finite number");
    if (integer) {  // the least integer inside
      const double c = std::ceil(*b.lo);
      lo = clamp(c == *b.lo && lo_excl ? c + 1 : c);
      lo_excl = false;
    } else if (std::floor(*b.lo) != *b.lo) {
      return unsupported("a bound that is not an integer on a number is not supported (use an integer bound or type integer)");
    } else {
      lo = clamp(*b.lo);
    }
  }
  if (b.hi) {
    if (!std::isfinite(*b.hi)) return bad_input("a bound must be a finite number");
    if (integer) {
      const double f = std::floor(*b.hi);
      hi = clamp(f == *b.hi && hi_excl ? f - 1 : f);
      hi_excl = false;
    } else if (std::floor(*b.hi) != *b.hi) {
      return unsupported("a bound that is not an integer on a number is not supported (use an integer bound or type integer)");
    } else {
      hi = clamp(*b.hi);
    }
  }
  std::vector<ExprPtr> alts;
  // v >= 0: y = v with low = max(lo, 0).
  if (!hi || *hi > 0 || (*hi == 0 && !hi_excl)) {
    const bool above_lo = lo && *lo >= 0;
    alts.push_back(magnitude(above_lo ? *lo : 0, above_lo && lo_excl, hi, hi_excl, integer));
  }
  // v < 0: y = -v > 0, y <= -lo, y >= -hi.
  if (!lo || *lo < 0) {
    const bool below_hi = hi && *hi < 0;
    const int64_t low = below_hi ? -*hi : (integer ? 1 : 0);
    const bool low_excl = below_hi ? hi_excl : !integer;  // y > 0
    alts.push_back(seq({byte_ranges({{'-', '-'}}), magnitude(low, low_excl, lo ? std::optional<int64_t>(-*lo) : std::nullopt, lo_excl, integer)}));
  }
  return alt(std::move(alts));
}

}  // namespace og::constrain
