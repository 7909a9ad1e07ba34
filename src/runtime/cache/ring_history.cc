#include "runtime/cache/ring_history.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace og::runtime {

uint8_t* RingHistory::row(bool v, int32_t h, int64_t p) {
  const auto c = static_cast<size_t>(p / kChunkRows);
  if (c >= chunks_.size()) chunks_.resize(c + 1);
  if (!chunks_[c]) chunks_[c] = std::make_unique<uint8_t[]>(2 * chunk_half());
  return chunks_[c].get() + (v ? chunk_half() : 0) +
         (static_cast<size_t>(h) * kChunkRows + static_cast<size_t>(p % kChunkRows)) * row_bytes_;
}

const uint8_t* RingHistory::row(bool v, int32_t h, int64_t p) const {
  if (p < borrowed_end_)
    return (v ? borrowed_v_ : borrowed_k_) + (static_cast<size_t>(h) * static_cast<size_t>(borrowed_rows_) +
                                              static_cast<size_t>(p - first_)) * row_bytes_;
  const auto c = static_cast<size_t>(p / kChunkRows);
  return chunks_[c].get() + (v ? chunk_half() : 0) +
         (static_cast<size_t>(h) * kChunkRows + static_cast<size_t>(p % kChunkRows)) * row_bytes_;
}

void RingHistory::reset(int64_t first) {
  first_ = end_ = first;
  borrowed_.reset();
  borrowed_end_ = first;
}

void RingHistory::truncate(int64_t n) {
  end_ = std::min(n, end_);
  borrowed_end_ = std::min(borrowed_end_, end_);  // the borrowed rows stay; fewer are read
}

void RingHistory::adopt(std::shared_ptr<const void> owner, const uint8_t* k, const uint8_t* v, int64_t rows,
                        int64_t src_first, int64_t n) {
  OG_CHECK(n >= 0 && n <= rows);
  reset(src_first);
  borrowed_ = std::move(owner);
  borrowed_k_ = k;
  borrowed_v_ = v;
  borrowed_rows_ = rows;
  borrowed_end_ = end_ = src_first + n;
}

void RingHistory::record(const kernels::KvStorage& cache, int64_t p0, int64_t n) {
  OG_CHECK(p0 == end_);
  const auto* k = static_cast<const uint8_t*>(cache.k);
  const auto* v = static_cast<const uint8_t*>(cache.v);
  for (int32_t h = 0; h < kv_heads_; ++h)
    for (int64_t p = p0; p < p0 + n; ++p) {
      const size_t at = (static_cast<size_t>(h) * static_cast<size_t>(cache.slots) + static_cast<size_t>(cache.slot(p))) * row_bytes_;
      std::memcpy(row(false, h, p), k + at, row_bytes_);
      std::memcpy(row(true, h, p), v + at, row_bytes_);
    }
  end_ = p0 + n;
}

void RingHistory::record(const uint8_t* k, const uint8_t* v, int64_t rows, int64_t src_first, int64_t p0, int64_t n) {
  OG_CHECK(p0 == end_ && p0 >= src_first && p0 + n <= src_first + rows);
  for (int32_t h = 0; h < kv_heads_; ++h)
    for (int64_t p = p0; p < p0 + n;) {  // runs within one chunk are contiguous
      const int64_t run = std::min(p0 + n, (p / kChunkRows + 1) * kChunkRows) - p;
      const size_t at = (static_cast<size_t>(h) * static_cast<size_t>(rows) + static_cast<size_t>(p - src_first)) * row_bytes_;
      std::memcpy(row(false, h, p), k + at, static_cast<size_t>(run) * row_bytes_);
      std::memcpy(row(true, h, p), v + at, static_cast<size_t>(run) * row_bytes_);
      p += run;
    }
  end_ = p0 + n;
}

void RingHistory::copy_out(int64_t from, int64_t to, uint8_t* k, uint8_t* v) const {
  OG_CHECK(from >= first_ && to <= end_);
  const auto rows = static_cast<size_t>(to - from);
  for (int32_t h = 0; h < kv_heads_; ++h)
    for (int64_t p = from; p < to;) {  // runs within the borrowed rows or one chunk are contiguous
      const int64_t n = std::min(to, p < borrowed_end_ ? borrowed_end_ : (p / kChunkRows + 1) * kChunkRows) - p;
      const size_t at = (static_cast<size_t>(h) * rows + static_cast<size_t>(p - from)) * row_bytes_;
      std::memcpy(k + at, row(false, h, p), static_cast<size_t>(n) * row_bytes_);
      std::memcpy(v + at, row(true, h, p), static_cast<size_t>(n) * row_bytes_);
      p += n;
    }
}

uint64_t RingHistory::bytes() const {
  uint64_t n = 0;
  for (const auto& c : chunks_)
    if (c) n += 2 * chunk_half();
  return n;
}

}  // namespace og::runtime
