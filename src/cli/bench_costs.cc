#include "cli/bench_costs.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <string>

namespace og::cli {

uint64_t matrix_bytes(const kernels::Matrix& w) {
  return static_cast<uint64_t>(program::stored_rows(w.rows, w.row_block) * kernels::row_storage_bytes(w));
}

uint64_t decode_weight_bytes(const runtime::Model& m) {
  std::set<const void*> seen;
  uint64_t bytes = 0;
  auto once = [&](const void* p, uint64_t n) {
    if (p != nullptr && seen.insert(p).second) bytes += n;
  };
  for (const runtime::BoundOp& op : m.ops()) {
    switch (op.kind) {
      case runtime::OpKind::kLinear:
        once(op.matrix.data, matrix_bytes(op.matrix));
        once(op.vec, static_cast<uint64_t>(op.matrix.rows) * 4);
        break;
      case runtime::OpKind::kHeadLinear: once(op.matrix.data, matrix_bytes(op.matrix)); break;
      case runtime::OpKind::kEmbedding:
        bytes += static_cast<uint64_t>(kernels::row_storage_bytes(op.matrix));
        break;
      case runtime::OpKind::kRmsNorm: once(op.vec, static_cast<uint64_t>(op.dim) * 4); break;
      case runtime::OpKind::kLayerNorm:
        once(op.vec, static_cast<uint64_t>(op.dim) * op.norm_groups * 4);
        once(op.vec2, static_cast<uint64_t>(op.dim) * op.norm_groups * 4);
        break;
      case runtime::OpKind::kMoe: {
        // A token reads top_k experts (their mean size: experts of one op have one shape),
        // and the shared expert and its gate.
        const kernels::MoeParams& p = m.moe(op.moe);
        uint64_t experts = 0;
        for (int64_t e = 0; e < p.n_experts; ++e)
          experts += matrix_bytes(p.gate[e]) + matrix_bytes(p.up[e]) + matrix_bytes(p.down[e]);
        if (p.n_experts > 0) bytes += experts / static_cast<uint64_t>(p.n_experts) * static_cast<uint64_t>(p.top_k);
        if (p.has_shared) bytes += matrix_bytes(p.shared_gate) + matrix_bytes(p.shared_up) + matrix_bytes(p.shared_down);
        if (p.has_shared_expert_gate) bytes += matrix_bytes(p.shared_expert_gate);
        break;
      }
      default: break;
    }
  }
  return bytes;
}

uint64_t decode_kv_bytes(const runtime::Model& m, int64_t pos, StorageType kv) {
  uint64_t bytes = 0;
  for (const runtime::BoundOp& op : m.ops()) {
    if (op.kind != runtime::OpKind::kAttend) continue;
    const int64_t keys = op.attend.window > 0 ? std::min<int64_t>(pos + 1, op.attend.window) : pos + 1;
    bytes += 2 * static_cast<uint64_t>(keys) * op.attend.n_kv_heads * static_cast<uint64_t>(kv_row_bytes(kv, op.attend.head_dim));
  }
  return bytes;
}

PrefillWork prefill_work(const runtime::Model& m, int64_t P, int64_t chunk) {
  const int64_t steps = (P + chunk - 1) / chunk;
  double linear = 0, int8 = 0, bf16 = 0, attention = 0;
  for (const runtime::BoundOp& op : m.ops()) {
    if (op.kind == runtime::OpKind::kLinear || op.kind == runtime::OpKind::kHeadLinear) {
      const double rows = op.out == m.logits() ? static_cast<double>(steps) : static_cast<double>(P);
      const double f = 2.0 * static_cast<double>(op.matrix.rows) * static_cast<double>(op.matrix.cols) * rows;
      linear += f;
      if (op.xquant == kernels::XQuant::kInt8) int8 += f;
      if (op.xquant == kernels::XQuant::kBF16) bf16 += f;
    } else if (op.kind == runtime::OpKind::kMoe) {  // each token: top_k experts and the shared one
      const kernels::MoeParams& p = m.moe(op.moe);
      auto mm = [](const kernels::Matrix& w) { return 2.0 * static_cast<double>(w.rows) * static_cast<double>(w.cols); };
      double f = p.n_experts > 0 ? static_cast<double>(p.top_k) * (mm(p.gate[0]) + mm(p.up[0]) + mm(p.down[0])) : 0;
      if (p.has_shared) f += mm(p.shared_gate) + mm(p.shared_up) + mm(p.shared_down);
      f *= static_cast<double>(P);
      linear += f;
      if (p.xquant == kernels::XQuant::kInt8) int8 += f;
    } else if (op.kind == runtime::OpKind::kAttend) {
      double keys = 0;
      for (int64_t t = 0; t < P; ++t) keys += static_cast<double>(op.attend.window > 0 ? std::min<int64_t>(t + 1, op.attend.window) : t + 1);
      attention += 4.0 * op.attend.n_heads * op.attend.head_dim * keys;
    }
  }
  return PrefillWork{.flops = linear + attention,
                     .int8_share = linear > 0 ? int8 / linear : 0,
                     .bf16_share = linear > 0 ? bf16 / linear : 0};
}

Result<Bandwidth> measure_bandwidth(uint64_t bytes, ThreadPool* pool) {
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return resource_error("cannot map {} bytes for the bandwidth test", bytes);
  float* x = static_cast<float*>(mem);
  pool->run(64, [&](int64_t t) {  // first touch, spread over the threads
    const int64_t b = n * t / 64, e = n * (t + 1) / 64;
    std::fill(x + b, x + e, 1.0f);
  });
  double best = 0, sink = 0;
  for (int pass = 0; pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    sink += kernels::stream_sum(x, n, pool);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (pass > 0) best = std::max(best, static_cast<double>(bytes) / s / 1e9);
  }
  ::munmap(mem, bytes);
  if (sink != 6.0 * static_cast<double>(n)) return Status(ErrorCode::kInternal, "bandwidth test summed wrongly");
  return Bandwidth{.gb_s = best, .buffer_bytes = bytes, .threads = pool->size()};
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double v = -1;
  in >> v;
  return v;
}

CpuTicks cpu_ticks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  if (!(in >> cpu) || cpu != "cpu") return {};
  CpuTicks t;
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  for (int field = 0; field < 8; ++field) {
    uint64_t v = 0;
    if (!(in >> v)) return {};
    t.total += v;
    if (field == 7) t.steal = v;
  }
  return t;
}

double steal_fraction(const CpuTicks& before, const CpuTicks& after) {
  if (after.total <= before.total) return 0;
  return static_cast<double>(after.steal - before.steal) / static_cast<double>(after.total - before.total);
}

}  // namespace og::cli
