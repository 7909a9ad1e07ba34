// The rows a ring cache lets go of, kept beside it (CacheSet::keep_history, DESIGN.md §4b).
//
// A ring of W + chunk - 1 slots holds only the last positions it wrote, so a prefix state
// copied from it serves exactly its own length. The prefix store wants more: a request that
// shares a stored prompt up to block b must restore at b, and position b reads the window
// before b, long overwritten in the ring. So a session that feeds the prefix store records
// every row its rings write, once, right after the step that wrote it, into this history;
// a prefix state then holds a windowed cache's rows from position 0 like a flat cache's and
// serves any shorter prefix. The ring itself is untouched: attention still reads only it.
//
// Rows live in chunks of kChunkRows positions, each [kv_heads, kChunkRows, row_bytes] for K
// and the same for V, allocated when first written and kept across sequences (a slot's
// next sequence writes the same positions again): the history grows with the longest
// sequence the session has held, never to max_ctx_len up front, and never moves a row once
// written. Positions [first(), end()) are held.
//
// A restored prefix state is borrowed, not copied (adopt()): its rows are immutable and
// shared (the prefix store holds them too), so positions [first(), borrowed_end) are read
// from it and only the rows written after the restore go to chunks. A 1.5k-token restore of
// a 1B model with 22 rings copied 66 MB into histories before, which was most of its time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/kernels.h"

namespace og::runtime {

class RingHistory {
 public:
  static constexpr int64_t kChunkRows = 256;

  RingHistory(int32_t kv_heads, size_t row_bytes) : kv_heads_(kv_heads), row_bytes_(row_bytes) {}

  int64_t first() const { return first_; }
  int64_t end() const { return end_; }
  // Holds nothing; the next position recorded must be `first`.
  void reset(int64_t first);
  // Keeps positions [first(), n) (n >= first()).
  void truncate(int64_t n);
  // Holds positions [src_first, src_first + n), read from buffers laid out [kv_heads, rows,
  // row_bytes] whose row r is position src_first + r, which `owner` keeps alive and nobody
  // writes (a prefix state's K/V); later records append after them.
  void adopt(std::shared_ptr<const void> owner, const uint8_t* k, const uint8_t* v, int64_t rows, int64_t src_first,
             int64_t n);

  // Appends positions [p0, p0 + n), p0 == end(), reading them from a cache by its slots.
  void record(const kernels::KvStorage& cache, int64_t p0, int64_t n);
  // Appends positions [p0, p0 + n), p0 == end(), from buffers laid out [kv_heads, rows,
  // row_bytes] whose row r is position src_first + r (a prefix state's K/V).
  void record(const uint8_t* k, const uint8_t* v, int64_t rows, int64_t src_first, int64_t p0, int64_t n);
  // Copies positions [from, to) (within [first(), end())) into [kv_heads, to - from, row_bytes] buffers.
  void copy_out(int64_t from, int64_t to, uint8_t* k, uint8_t* v) const;

  // Bytes allocated (chunks are kept for the next sequence); borrowed rows are not counted.
  uint64_t bytes() const;

 private:
  // Row (h, p) of K (v = false) or V in its chunk, allocating the chunk on first use.
  uint8_t* row(bool v, int32_t h, int64_t p);
  const uint8_t* row(bool v, int32_t h, int64_t p) const;
  size_t chunk_half() const { return static_cast<size_t>(kv_heads_) * kChunkRows * row_bytes_; }

  int32_t kv_heads_;
  size_t row_bytes_;
  int64_t first_ = 0, end_ = 0;
  // Borrowed rows (adopt()): positions [first_, borrowed_end_) are row p - first_ of
  // borrowed_k_/borrowed_v_, each [kv_heads, borrowed_rows_, row_bytes].
  std::shared_ptr<const void> borrowed_;
  const uint8_t* borrowed_k_ = nullptr;
  const uint8_t* borrowed_v_ = nullptr;
  int64_t borrowed_rows_ = 0, borrowed_end_ = 0;
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;  // [chunk] K then V, each [kv_heads, kChunkRows, row_bytes]
};

}  // namespace og::runtime
