// What `offgraph bench` reports its figures against: the bytes and flops a model's token
// costs (from the bound program, so every family and storage counts alike), and the
// machine's memory bandwidth, load and stolen CPU time, measured in the same run.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "base/storage_type.h"
#include "base/thread_pool.h"
#include "kernels/kernels.h"
#include "runtime/model.h"

namespace og::cli {

// Bytes of a whole matrix as stored: an interleaved one's padding rows are read too.
uint64_t matrix_bytes(const kernels::Matrix& w);

// Weight bytes a decoded token reads: every linear weight (a matrix shared by several ops,
// such as tied embeddings, counted once), norm weights and biases, one embedding row, and
// of each mixture of experts the top_k experts a token chooses plus its shared expert.
uint64_t decode_weight_bytes(const runtime::Model& m);

// K/V bytes the attention ops read for one decoded token at position pos (each op reads the
// keys and values its window allows; KV-shared layers read their donor's again).
uint64_t decode_kv_bytes(const runtime::Model& m, int64_t pos, StorageType kv);

// Arithmetic of a P-token prefill from an empty cache, in steps of `chunk` tokens: every
// linear over every token (2 flops per weight and token), except the LM head, which runs
// on the last token of each step only; each token's top_k experts (and shared expert) of a
// mixture of experts; attention scores and weighted values (4 flops per
// head dimension and key, keys limited by the window). `int8_share` is the fraction of
// the linears' flops that run as int8 products (quantized weights, int8 activations),
// `bf16_share` of those that run as bf16 products (bf16 weights, bf16 activations).
struct PrefillWork {
  double flops = 0;
  double int8_share = 0;
  double bf16_share = 0;
};

PrefillWork prefill_work(const runtime::Model& m, int64_t P, int64_t chunk);

struct Bandwidth {
  double gb_s = 0;
  uint64_t buffer_bytes = 0;
  int threads = 0;
};

// Best of 5 timed passes (after one untimed pass) of a streaming read over `bytes`.
Result<Bandwidth> measure_bandwidth(uint64_t bytes, ThreadPool* pool);

double load_average();

// All CPUs' time in clock ticks (/proc/stat's first line), and the part of it stolen: time
// a virtual machine's vCPUs wanted to run but the hypervisor ran something else. Neither
// the load average nor this process's own clocks show it, and on a shared host it can take
// half of every core.
struct CpuTicks {
  uint64_t total = 0, steal = 0;
};

CpuTicks cpu_ticks();

double steal_fraction(const CpuTicks& before, const CpuTicks& after);

}  // namespace og::cli
