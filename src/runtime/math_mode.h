// The math mode a program runs in: a run-time choice, made when the program is loaded.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace og::runtime {

// How a bf16 program's linears meet their input (program.fbs LinearAttrs.bf16_activations).
//   kAsExported: as the program file says (--qactivations at export);
//   kExact: f32 activations everywhere (int8 activations of 4w/8w weights stay: they are
//           the quantized weights' own path);
//   kFast: activations rounded to bf16 and BF16 dot products on every interleaved BF16
//          weight (vdpbf16ps where the CPU has it, kernels::bf16_dot_native()).
// Within a mode every equality holds bit for bit (decode == prefill, batched == solo,
// restored == cold); across modes the numbers differ, so stored states are keyed by it.
enum class MathMode : uint8_t { kAsExported, kExact, kFast };

// "exact", "fast", or "auto": fast where the CPU's BF16 dot instructions outrun its f32
// FMAs (kernels::bf16_dot_outruns_fma(): AMD Zen 5, not a Xeon without AMX), else as
// exported. Anything else is a usage error naming the flag's values.
Result<MathMode> parse_math_mode(const std::string& name);

}  // namespace og::runtime
