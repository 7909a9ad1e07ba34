#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace og {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// The whole file into a fresh anonymous mapping whose start is 2 MiB aligned (so that every
// 2 MiB of it can be one huge page), then made read-only like the file mapping.
Status read_into_huge_pages(int fd, const std::string& path, size_t size, void** mapping, size_t* mapping_bytes,
                            const uint8_t** data) {
  const size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  const size_t bytes = rounded + kHugePage;  // room to align the start
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return resource_error("{}: cannot allocate {} bytes to load it: {}", path, bytes, std::strerror(errno));
  *mapping = m;
  *mapping_bytes = bytes;
  auto* p = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(m) + kHugePage - 1) / kHugePage * kHugePage);
  ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: where THP is off the pages stay small
  for (size_t done = 0; done < size;) {
    const size_t chunk = std::min<size_t>(size - done, size_t{64} << 20);
    const ssize_t n = ::pread(fd, p + done, chunk, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return resource_error("{}: read failed at byte {}: {}", path, done, std::strerror(errno));
    if (n == 0) return bad_input("{}: the file shrank to {} bytes while it was read (it was {})", path, done, size);
    done += static_cast<size_t>(n);
  }
  ::mprotect(p, rounded, PROT_READ);  // read-only, as the mapping is
  *data = p;
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path, Residency residency) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bad_input("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return bad_input("{}: cannot stat: {}", path, std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return bad_input("{}: is a directory, expected a file", path);
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  file->residency_ = residency;
  Status status = Status::ok();
  if (file->size_ > 0 && residency == Residency::kHugePages) {
    status = read_into_huge_pages(fd, path, file->size_, &file->mapping_, &file->mapping_bytes_, &file->data_);
  } else if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      status = resource_error("{}: mmap failed: {}", path, std::strerror(errno));
    } else {
      file->mapping_ = p;
      file->mapping_bytes_ = file->size_;
      file->data_ = static_cast<const uint8_t*>(p);
    }
  }
  ::close(fd);
  if (!status.is_ok()) return status;  // the destructor unmaps what was mapped
  return file;
}

MappedFile::~MappedFile() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
}

Result<std::string> read_text_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return bad_input("{}: cannot open: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return bad_input("{}: is a directory, expected a file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad_input("{}: cannot open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace og
