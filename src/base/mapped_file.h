// A read-only file in memory, as long as the MappedFile lives: mapped in place (zero-copy,
// sharing the page cache), or read into anonymous memory in 2 MiB transparent huge pages.
//
// Why the second: a program's weights are read end to end every decode step, and through
// 4 KiB pages that is one TLB entry per 4 KiB. In a virtual machine each TLB miss walks two
// page tables (the guest's and the host's). Measured on the 2-vCPU VM of docs/benchmarks.md
// (session 13), a 1B-parameter bf16 program decoded at 12.7-14.4 tok/s from the file mapping (the
// kernel had mapped about half of it in huge pages) against 18.0-23.2 tok/s from huge pages,
// in alternating runs; a loop streaming 2 GB of weights there also stalled less often.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"

namespace og {

enum class Residency {
  kMapped,     // mmap in place: nothing copied, pages come and go with the page cache
  kHugePages,  // read once into anonymous huge pages (advice only: small pages where THP is off)
};

// What a `--mmap` flag (Python: mmap=True) asks for.
inline Residency residency_for_mmap(bool mmap) { return mmap ? Residency::kMapped : Residency::kHugePages; }

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path, Residency residency = Residency::kMapped);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  size_t size() const { return size_; }
  Residency residency() const { return residency_; }
  const uint8_t* data() const { return data_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  Residency residency_ = Residency::kMapped;
  void* mapping_ = nullptr;  // what to munmap: the file's mapping, or the anonymous one data_ lies in
  size_t mapping_bytes_ = 0;
};

// Reads a whole (small) file into a string: config.json, tokenizer.json, index files.
Result<std::string> read_text_file(const std::string& path);

}  // namespace og
