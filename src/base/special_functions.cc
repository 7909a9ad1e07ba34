#include "base/special_functions.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <numbers>

namespace og {

double erfinv(double y) {
  if (!(y >= -1.0 && y <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0 || y == -1.0) return std::copysign(std::numeric_limits<double>::infinity(), y);
  // Giles' single-precision approximation ("Approximating the erfinv function", 2010) as the
  // starting point: it is what torch.special.erfinv computes in float32...
  double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = c + p * w;
  }
  double x = p * y;
  // ...then Newton steps on erf(x) - y bring it to float64 accuracy (each doubles the digits).
  for (int it = 0; it < 4; ++it) x -= (std::erf(x) - y) / (2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
  return x;
}

}  // namespace og
