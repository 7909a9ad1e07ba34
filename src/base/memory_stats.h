// The process's resident memory, as the kernel reports it (for speed and memory reports).
// Pages of mmap'd program files count once they are touched.
#pragma once

#include <cstdint>

namespace og {

uint64_t resident_bytes();       // VmRSS now (0 if unknown)
uint64_t peak_resident_bytes();  // VmHWM: the high-water mark (0 if unknown)

}  // namespace og
