#include "base/memory_stats.h"

#include <cstdio>
#include <cstring>

namespace og {
namespace {

// A "Name:   1234 kB" line of /proc/self/status, in bytes.
uint64_t status_field(const char* name) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kb = 0;
  const size_t n = std::strlen(name);
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, name, n) == 0 && line[n] == ':') {
      unsigned long long v = 0;
      if (std::sscanf(line + n + 1, "%llu", &v) == 1) kb = v;
      break;
    }
  std::fclose(f);
  return kb * 1024;
}

}  // namespace

uint64_t resident_bytes() { return status_field("VmRSS"); }
uint64_t peak_resident_bytes() { return status_field("VmHWM"); }

}  // namespace og
