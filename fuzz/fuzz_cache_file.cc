// Cache save-file loading into a session of a fixed tiny program. The trailing checksum is
// recomputed over the mutated bytes so the fuzzer reaches the header and geometry checks.
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "fuzz_util.h"
#include "runtime/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto model = og::runtime::Model::load(OG_FUZZ_PROGRAM);
  if (!model.is_ok()) __builtin_trap();  // the fixture itself must load
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= 16) {
    const uint64_t sum = XXH3_64bits(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  }
  const std::string path = og::fuzz::write_scratch("c.kv", bytes.data(), bytes.size());
  auto session = og::runtime::Session::create(*model, {.max_ctx_len = 64});
  if (!session.is_ok()) __builtin_trap();
  if ((*session)->load(path).is_ok()) (void)(*session)->append(std::vector<int32_t>{1});
  return 0;
}
