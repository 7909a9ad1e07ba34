#include "runtime/math_mode.h"

#include "kernels/kernels.h"

namespace og::runtime {

Result<MathMode> parse_math_mode(const std::string& name) {
  if (name == "exact") return MathMode::kExact;
  if (name == "fast") return MathMode::kFast;
  if (name == "auto") return kernels::bf16_dot_outruns_fma() ? MathMode::kFast : MathMode::kAsExported;
  return usage_error("--math '{}': expected auto, exact or fast", name);
}

}  // namespace og::runtime
