// Special functions that both the exporter and the float64 reference need, written once so
// that a wrong coefficient cannot hide behind two identical copies (tests/base_test.cc pins
// the values against an independent high-precision computation).
#pragma once

namespace og {

// erf⁻¹(y) for y in (-1, 1), to a few ulps of float64 (near |y| = 1, to the resolution
// float64 erf allows there); ±infinity at ±1, NaN outside [-1, 1].
double erfinv(double y);

}  // namespace og
