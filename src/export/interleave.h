// Interleaved float matrices at export (program.fbs, row_block 16): the byte layout, and
// which tensors of a program may be stored so.
//
// A float matrix is interleaved when every op that reads it binds it as a matrix of linear,
// embedding or moe (the readers whose kernels take any matrix storage; the validator refuses
// the others), so decided once the graph is complete. Quantized matrices follow their own
// rule (graph_builder.h); both keep row-major storage under --layout row-major.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "program/program_file.h"

namespace og::exporter {

// The interleaved bytes of `rows` row-major rows of `cols` values of `elem_bytes` bytes each
// (4: f32, 2: bf16 / f16; cols a multiple of 4 / elem_bytes): whole blocks of 16 rows, the
// last padded with zero rows, stored_rows(rows, 16) * cols * elem_bytes bytes. Blocks are
// independent, so a matrix may be converted in pieces of whole blocks.
std::vector<uint8_t> interleave_float_rows(std::span<const uint8_t> row_major, int64_t rows, int64_t cols,
                                           int64_t elem_bytes);

// [program.tensors.size()]: true for a tensor that some op reads and every op reads as a
// linear's weight, an embedding's table or a moe expert matrix (gate, up, down, shared
// gate / up / down), or a head_linear's weight whose groups are whole blocks of 16 rows. The
// shared expert's [1, H] sigmoid gate and embedding_overlay's table are not: their readers
// refuse interleaved storage (and one row gains nothing from it).
std::vector<bool> read_only_as_matrices(const fb::ProgramT& program);

}  // namespace og::exporter
