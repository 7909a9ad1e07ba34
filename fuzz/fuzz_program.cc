// Program loading and verification. The checksums (whole file, and the header's, when the
// preamble's header segment lies in the file) are recomputed over the mutated bytes so the
// fuzzer gets past them to the preamble, FlatBuffers and validator checks; a program
// that loads and is small enough runs a few steps (every kernel on validated shapes).
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "fuzz_util.h"
#include "program/program_file.h"
#include "runtime/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= og::program::kPreambleSize) {
    const uint64_t sum = XXH3_64bits(bytes.data() + 64, bytes.size() - 64);
    std::memcpy(bytes.data() + 48, &sum, 8);  // Preamble::checksum
    og::program::Preamble p;
    std::memcpy(&p, bytes.data(), sizeof p);
    if (p.header_offset <= bytes.size() && p.header_size <= bytes.size() - p.header_offset) {
      const uint64_t hsum = XXH3_64bits(bytes.data() + p.header_offset, p.header_size);
      std::memcpy(bytes.data() + 56, &hsum, 8);  // Preamble::header_checksum
    }
  }
  const std::string path = og::fuzz::write_scratch("p.ogp", bytes.data(), bytes.size());
  auto model = og::runtime::Model::load(path);
  if (!model.is_ok()) return 0;
  const auto& m = **model;
  // Keep runs cheap: small vocab, chunk and activation plan only.
  int64_t floats = 0;
  for (int32_t w : m.slot_widths()) floats += w;
  if (m.vocab_size() > 4096 || m.prefill_chunk_size() > 16 || floats > 1 << 16 || m.weight_bytes() > (8u << 20)) return 0;
  auto session = og::runtime::Session::create(*model, {.max_ctx_len = 32});
  if (!session.is_ok()) return 0;
  std::vector<int32_t> ids = {0, 1 % m.vocab_size(), 2 % m.vocab_size()};
  if (static_cast<int64_t>(ids.size()) > m.prefill_chunk_size()) ids.resize(1);
  (void)(*session)->append(ids);
  (void)(*session)->append(std::vector<int32_t>{0}, og::runtime::LogitsRows::kLast);
  return 0;
}
