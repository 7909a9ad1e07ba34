// Checks a program header before the runtime trusts it: every index in range, every tensor
// inside the data segment and sized shape x dtype, every op's attributes consistent with
// its inputs' widths and weights' shapes, values defined before use, and exactly one
// update_and_attend per layer matching the published cache layout.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "program/layout.h"
#include "program/program_generated.h"

namespace og::program {

Status validate_program(const fb::Program& p, uint64_t data_size);

// The published layout as a CacheLayout (call after validate_program).
CacheLayout layout_from_fb(const fb::Layout& l);
std::unique_ptr<fb::LayoutT> layout_to_fb(const CacheLayout& l);

}  // namespace og::program
