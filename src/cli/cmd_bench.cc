// `offgraph bench -m FILE [-p 128] [-n 64] [-r 3] [--threads N] [--ctx N] [--kv-dtype D] [--simd T] [--profile] [--json]`
// llama-bench style: prefill of p tokens in one step from an empty cache, then decode of n
// tokens one at a time; the median of r runs after one warm-up run. The same run measures
// the machine's memory read bandwidth (a multi-threaded streaming read over a buffer much
// larger than the last-level cache) and reports decode against its floor: the time to read
// once the weight bytes a decoded token needs. `--batch 1,2,4,8` adds batched decode: B
// sessions, each prefilled from its own prompt, decode together (one row each per step), so
// a step reads the weights once for all B; reported as aggregate and per-sequence tok/s.
// Prefill is reported against the cores' compute peak, measured in the same run (an
// in-register FMA loop, and the int8 kernel's byte multiply-add loop, on every thread).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "base/thread_pool.h"
#include "cli/bench_costs.h"
#include "cli/commands.h"
#include "kernels/kernels.h"
#include "base/memory_stats.h"
#include "program/program_file.h"
#include "program/ops.h"
#include "runtime/batch_runner.h"
#include "runtime/session.h"

namespace og::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<int32_t> bench_tokens(int64_t n, int64_t vocab, uint32_t seed) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345u;
  for (int32_t& id : ids) {
    x = x * 1664525u + 1013904223u;
    id = static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(vocab));
  }
  return ids;
}

struct BatchRow {
  int64_t batch = 0;
  double aggregate_tok_s = 0;     // B * tokens / seconds, median of the runs
  double per_sequence_tok_s = 0;  // tokens / seconds
};

// B sessions prefilled to `from` (each from its own prompt), then `n` decode steps of B rows;
// the median of `runs` timed runs after a warm-up, rewinding (or refilling) between runs.
Result<BatchRow> measure_batch(const std::shared_ptr<const runtime::Model>& model, std::shared_ptr<ThreadPool> pool,
                               StorageType kv, int64_t ctx_len, int64_t B, int64_t from, int64_t n, int runs) {
  OG_ASSIGN_OR_RETURN(auto runner, runtime::BatchRunner::create(model, {.pool = pool}));
  if (B > runner->max_rows())
    return usage_error("--batch {}: more sequences than the program's prefill_chunk_size ({}) rows a step", B, runner->max_rows());
  std::vector<std::unique_ptr<runtime::Session>> sessions;
  std::vector<std::vector<int32_t>> prompts, gens;
  for (int64_t b = 0; b < B; ++b) {
    OG_ASSIGN_OR_RETURN(auto s, runtime::Session::create(model, {.kv_dtype = kv, .max_ctx_len = ctx_len, .pool = pool}));
    sessions.push_back(std::move(s));
    prompts.push_back(bench_tokens(from, model->vocab_size(), static_cast<uint32_t>(10 + b)));
    gens.push_back(bench_tokens(n, model->vocab_size(), static_cast<uint32_t>(100 + b)));
  }
  auto fill = [&](runtime::Session& s, const std::vector<int32_t>& prompt) -> Status {
    s.clear();
    for (int64_t t = 0; t < from; t += s.max_step_rows()) {
      const int64_t k = std::min(s.max_step_rows(), from - t);
      OG_TRY(s.append(std::span<const int32_t>(prompt.data() + t, static_cast<size_t>(k)), runtime::LogitsRows::kLast));
    }
    return Status::ok();
  };
  for (int64_t b = 0; b < B; ++b) OG_TRY(fill(*sessions[b], prompts[b]));
  std::vector<double> secs;
  std::vector<runtime::BatchEntry> entries(static_cast<size_t>(B));
  for (int run = 0; run <= runs; ++run) {
    for (int64_t b = 0; b < B; ++b)
      if (sessions[b]->length() != from && !sessions[b]->rewind(from).is_ok()) OG_TRY(fill(*sessions[b], prompts[b]));
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t b = 0; b < B; ++b)
        entries[b] = {.session = sessions[b].get(), .ids = std::span<const int32_t>(gens[b].data() + i, 1)};
      OG_TRY(runner->step(entries));
    }
    if (run > 0) secs.push_back(seconds_since(t0));
  }
  const double t = median(secs);
  return BatchRow{.batch = B,
                  .aggregate_tok_s = static_cast<double>(B * n) / t,
                  .per_sequence_tok_s = static_cast<double>(n) / t};
}

Result<std::vector<int64_t>> parse_batch_list(const std::string& s) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string item = s.substr(i, j - i);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 1)
      return usage_error("--batch '{}': expected sizes >= 1 separated by commas, e.g. 1,2,4,8", s);
    out.push_back(v);
    i = j + 1;
  }
  if (out.empty()) return usage_error("--batch '{}': expected sizes >= 1 separated by commas, e.g. 1,2,4,8", s);
  return out;
}

// --profile: the ops of one kind summed (linears: of one shape and storage type), with the
// weight bytes their calls read.
struct ProfileRow {
  std::string op;
  int64_t calls = 0;
  double seconds = 0;
  double weight_bytes = 0;
};

std::vector<ProfileRow> profile_rows(const runtime::Model& m, const runtime::OpTimes& t) {
  std::map<std::string, ProfileRow> by_op;
  for (size_t i = 0; i < m.ops().size(); ++i) {
    const runtime::BoundOp& op = m.ops()[i];
    std::string name = program::op_name(m.program().ops()->Get(static_cast<flatbuffers::uoffset_t>(i))->attrs_type());
    double bytes = 0;
    if (op.kind == runtime::OpKind::kLinear) {
      name += fmt::format(" {}x{} {}", op.matrix.rows, op.matrix.cols, storage_type_tag(op.matrix.type));
      bytes = static_cast<double>(kernels::row_storage_bytes(op.matrix)) * static_cast<double>(op.matrix.rows);
    }
    ProfileRow& r = by_op[name];
    r.op = name;
    r.calls += t.calls[i];
    r.seconds += t.seconds[i];
    r.weight_bytes += bytes * static_cast<double>(t.calls[i]);
  }
  std::vector<ProfileRow> rows;
  for (auto& [name, r] : by_op) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.seconds > b.seconds; });
  return rows;
}

nlohmann::ordered_json profile_json(const std::vector<ProfileRow>& rows) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const ProfileRow& r : rows)
    a.push_back({{"op", r.op}, {"calls", r.calls}, {"seconds", r.seconds}, {"weight_bytes", r.weight_bytes}});
  return a;
}

// Per unit (a prefill run, or a decoded token): calls, milliseconds, share of the ops' time,
// and for linears the weight bytes read per second.
void print_profile(const std::string& title, const std::vector<ProfileRow>& rows, double units) {
  double total = 0;
  for (const ProfileRow& r : rows) total += r.seconds;
  std::cout << fmt::format("\n{}\n| op | calls | ms | share | weights GB/s |\n|---|---:|---:|---:|---:|\n", title);
  for (const ProfileRow& r : rows) {
    if (r.calls == 0) continue;
    const std::string gb_s = r.weight_bytes > 0 && r.seconds > 0 ? fmt::format("{:.1f}", r.weight_bytes / r.seconds / 1e9) : "";
    std::cout << fmt::format("| {} | {:.0f} | {:.2f} | {:.1f} % | {} |\n", r.op, static_cast<double>(r.calls) / units,
                             1e3 * r.seconds / units, total > 0 ? 100 * r.seconds / total : 0.0, gb_s);
  }
  std::cout << fmt::format("| all ops | | {:.2f} | | |\n", 1e3 * total / units);
}

}  // namespace

Runner add_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure prefill and decode speed against the memory-bandwidth floor");
  struct Opts {
    std::string program, simd, batch;
    SessionFlags session;
    int64_t prefill = 128, decode = 64, ctx = 0, bw_mb = 0;
    int runs = 3;
    bool json = false, profile = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--program,-m", o->program, "program file")->required();
  cmd->add_option("-p,--prefill", o->prefill, "prefill tokens, one step from an empty cache")->capture_default_str();
  cmd->add_option("-n,--decode", o->decode, "decode tokens, one step each")->capture_default_str();
  cmd->add_option("-r,--runs", o->runs, "timed runs (the median is reported), after one warm-up run")->capture_default_str();
  add_session_flags(cmd, o->session);
  cmd->add_option("--ctx", o->ctx, "decode from position N (the cache is first filled by prefill); default: after the prefill");
  cmd->add_option("--bw-mb", o->bw_mb, "bandwidth test buffer in MB (default: 4x the last-level cache, at least 1024)");
  cmd->add_option("--simd", o->simd, "use SIMD targets no better than this one (e.g. AVX2), to compare");
  cmd->add_option("--batch", o->batch, "also decode B sequences together, for each B of a list such as 1,2,4,8");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_flag("--profile", o->profile,
                "also time every op of the timed runs: per op kind (linears per shape), milliseconds and weight GB/s");
  return [o]() -> Status {
    OG_ASSIGN_OR_RETURN(StorageType kv, check_session_flags(o->session));
    if (o->prefill < 1 || o->decode < 1 || o->runs < 1 || o->ctx < 0 || o->bw_mb < 0)
      return usage_error("-p, -n and -r must be >= 1; --ctx and --bw-mb >= 0");
    if (!o->simd.empty() && !kernels::limit_simd_target(o->simd.c_str()))
      return usage_error("--simd '{}': not a SIMD target compiled into this binary (current: {})", o->simd,
                         kernels::simd_target());
    std::vector<int64_t> batches;
    if (!o->batch.empty()) { OG_ASSIGN_OR_RETURN(batches, parse_batch_list(o->batch)); }
    OG_ASSIGN_OR_RETURN(auto model, runtime::Model::load(o->program, residency_of(o->session), math_of(o->session)));
    const int threads = o->session.threads > 0 ? o->session.threads : physical_cores();
    auto pool = std::make_shared<ThreadPool>(threads);
    const int64_t chunk = model->prefill_chunk_size();
    const int64_t decode_from = o->ctx > 0 ? o->ctx : o->prefill;
    // The program's context, or more if the bench needs it.
    const int64_t ctx_len = std::max<int64_t>({model->max_ctx_len(), o->prefill, decode_from + o->decode});
    OG_ASSIGN_OR_RETURN(auto session, runtime::Session::create(model, {.kv_dtype = kv, .max_ctx_len = ctx_len, .pool = pool}));
    const double load_before = load_average();
    const CpuTicks ticks_before = cpu_ticks();

    // Memory bandwidth with every physical core (or --threads, if more).
    uint64_t bw_bytes = static_cast<uint64_t>(o->bw_mb) << 20;
    if (bw_bytes == 0) {
      const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
      bw_bytes = std::max<uint64_t>(uint64_t{1} << 30, l3 > 0 ? 4 * static_cast<uint64_t>(l3) : 0);
    }
    auto bw_pool = threads >= physical_cores() ? pool : std::make_shared<ThreadPool>(physical_cores());
    OG_ASSIGN_OR_RETURN(Bandwidth bw, measure_bandwidth(bw_bytes, bw_pool.get()));
    const kernels::ComputePeak peak = kernels::compute_peak(pool.get());  // the threads prefill runs on

    const int64_t vocab = model->vocab_size();
    const std::vector<int32_t> prompt = bench_tokens(std::max(o->prefill, decode_from), vocab, 1);
    const std::vector<int32_t> gen = bench_tokens(o->decode, vocab, 2);
    const int64_t prefill_steps = (o->prefill + chunk - 1) / chunk;
    auto feed = [&](int64_t n) -> Status {  // positions length .. n - 1 of the prompt
      for (int64_t t = session->length(); t < n; t += chunk) {
        const int64_t k = std::min(chunk, n - t);
        OG_TRY(session->append(std::span<const int32_t>(prompt.data() + t, static_cast<size_t>(k)), runtime::LogitsRows::kLast));
      }
      return Status::ok();
    };
    auto decode = [&]() -> Status {
      for (int64_t i = 0; i < o->decode; ++i)
        OG_TRY(session->append(std::span<const int32_t>(gen.data() + i, 1), runtime::LogitsRows::kLast));
      return Status::ok();
    };
    // Prefill: from an empty cache; the first run warms up (page cache, pool, allocations).
    std::vector<double> prefill_tok_s, decode_tok_s;
    // --profile: op times of the timed runs (a warm-up run is not counted).
    runtime::OpTimes prefill_times(model->ops().size()), decode_times(model->ops().size());
    auto profile = [&](runtime::OpTimes* t) { session->set_op_times(o->profile ? t : nullptr); };
    for (int run = 0; run <= o->runs; ++run) {
      session->clear();
      profile(run > 0 ? &prefill_times : nullptr);
      const auto t0 = Clock::now();
      OG_TRY(feed(o->prefill));
      if (run > 0) prefill_tok_s.push_back(static_cast<double>(o->prefill) / seconds_since(t0));
    }
    profile(nullptr);
    // Decode from decode_from; between runs, rewind (or refill when the rings no longer allow it).
    session->clear();
    OG_TRY(feed(decode_from));
    for (int run = 0; run <= o->runs; ++run) {
      if (session->length() != decode_from && !session->rewind(decode_from).is_ok()) {
        session->clear();
        OG_TRY(feed(decode_from));
      }
      profile(run > 0 ? &decode_times : nullptr);
      const auto t0 = Clock::now();
      OG_TRY(decode());
      if (run > 0) decode_tok_s.push_back(static_cast<double>(o->decode) / seconds_since(t0));
      profile(nullptr);
    }
    std::vector<BatchRow> batch_rows;
    for (int64_t B : batches) {
      OG_ASSIGN_OR_RETURN(BatchRow row, measure_batch(model, pool, kv, ctx_len, B, decode_from, o->decode, o->runs));
      batch_rows.push_back(row);
    }
    const double load_after = load_average();
    const double steal = steal_fraction(ticks_before, cpu_ticks());
    const uint64_t rss = resident_bytes();  // after decoding: program pages touched, caches, buffers

    const uint64_t wbytes = decode_weight_bytes(*model);
    const uint64_t kv_bytes = decode_kv_bytes(*model, decode_from + o->decode / 2, kv);
    const double pp = median(prefill_tok_s), tg = median(decode_tok_s);
    const double floor_tok_s = bw.gb_s * 1e9 / static_cast<double>(wbytes);
    // Prefill against the peak of the arithmetic its linears run: int8 products when most
    // of their flops are int8, bf16 products when most are (--qactivations bf16), else f32
    // FMAs (bf16/f16 weights widen to f32).
    const PrefillWork work = prefill_work(*model, o->prefill, chunk);
    const double prefill_flop_s = work.flops / (static_cast<double>(o->prefill) / pp);
    const std::string peak_kind = work.int8_share > 0.5 ? "int8" : work.bf16_share > 0.5 ? "bf16" : "f32";
    const double peak_op_s = peak_kind == "int8" ? peak.int8_op_s : peak_kind == "bf16" ? peak.bf16_flop_s : peak.f32_flop_s;
    nlohmann::ordered_json j;
    j["program"] = o->program;
    j["simd"] = kernels::simd_target();
    j["threads"] = threads;
    j["kv_dtype"] = o->session.kv_dtype;
    j["math"] = model->math_name();
    j["prefill_tokens"] = o->prefill;
    j["prefill_steps"] = prefill_steps;
    j["decode_tokens"] = o->decode;
    j["decode_from"] = decode_from;
    j["runs"] = o->runs;
    j["prefill_tok_s"] = pp;
    j["decode_tok_s"] = tg;
    j["bandwidth_gb_s"] = bw.gb_s;
    j["bandwidth_buffer_bytes"] = bw.buffer_bytes;
    j["bandwidth_threads"] = bw.threads;
    j["weight_bytes"] = wbytes;
    j["kv_bytes_per_token"] = kv_bytes;
    j["decode_floor_tok_s"] = floor_tok_s;
    j["decode_floor_fraction"] = tg / floor_tok_s;
    j["prefill_flops"] = work.flops;
    j["prefill_gflop_s"] = prefill_flop_s / 1e9;
    j["peak_f32_gflop_s"] = peak.f32_flop_s / 1e9;
    j["peak_int8_gop_s"] = peak.int8_op_s / 1e9;
    j["peak_bf16_gflop_s"] = peak.bf16_flop_s / 1e9;
    j["prefill_peak"] = peak_kind;
    j["prefill_peak_fraction"] = prefill_flop_s / peak_op_s;
    j["prefill_tok_s_runs"] = prefill_tok_s;
    j["decode_tok_s_runs"] = decode_tok_s;
    j["load_average"] = {load_before, load_after};
    j["steal_fraction"] = steal;
    j["resident_bytes"] = rss;
    j["program_file_bytes"] = model->file().file_size();
    j["kv_cache_bytes"] = session->cache_bytes();
    if (!batch_rows.empty()) {
      std::vector<int64_t> b;
      std::vector<double> agg, per;
      for (const BatchRow& r : batch_rows) {
        b.push_back(r.batch);
        agg.push_back(r.aggregate_tok_s);
        per.push_back(r.per_sequence_tok_s);
      }
      j["batch"] = b;
      j["aggregate_decode_tok_s"] = agg;
      j["per_sequence_decode_tok_s"] = per;
    }
    const std::vector<ProfileRow> prefill_profile = profile_rows(*model, prefill_times),
                                  decode_profile = profile_rows(*model, decode_times);
    if (o->profile) {
      j["prefill_profile"] = profile_json(prefill_profile);
      j["decode_profile"] = profile_json(decode_profile);
    }
    if (o->json) {
      std::cout << j.dump() << "\n";
      return Status::ok();
    }
    auto range = [](const std::vector<double>& v) {
      return fmt::format("{:.2f}..{:.2f}", *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
    };
    std::cout << fmt::format("program {}\n  simd {}, {} threads, kv {}, math {}, {:.1f} MB of weights read per decoded token"
                             " (and {:.1f} MB of K/V, not in the floor)\n",
                             o->program, kernels::simd_target(), threads, o->session.kv_dtype, model->math_name(),
                             static_cast<double>(wbytes) / 1e6,
                             static_cast<double>(kv_bytes) / 1e6);
    std::cout << fmt::format("  memory read bandwidth {:.2f} GB/s ({} MB buffer, {} threads, best of 5 passes)\n", bw.gb_s,
                             bw.buffer_bytes >> 20, bw.threads);
    std::cout << fmt::format("  compute peak {:.1f} GFLOP/s f32 FMA, {:.1f} GOP/s int8, {:.1f} GFLOP/s bf16 ({} threads, best"
                             " of 5 rounds)\n",
                             peak.f32_flop_s / 1e9, peak.int8_op_s / 1e9, peak.bf16_flop_s / 1e9, peak.threads);
    std::cout << fmt::format("  resident memory after decode {:.1f} MB (program file {:.1f} MB, KV caches {:.1f} MB)\n",
                             static_cast<double>(rss) / 1e6, static_cast<double>(model->file().file_size()) / 1e6,
                             static_cast<double>(session->cache_bytes()) / 1e6);
    if (prefill_steps > 1)
      std::cout << fmt::format("  note: prefill_chunk_size is {}: the {}-token prefill ran as {} steps\n", chunk, o->prefill,
                               prefill_steps);
    if (load_before > 0.5 || load_after > 0.5)
      std::cout << fmt::format("  note: load average {:.2f} before, {:.2f} after: other processes shared the CPU\n",
                               load_before, load_after);
    if (steal > 0.02)
      std::cout << fmt::format("  note: the hypervisor withheld {:.0f} % of CPU time during the run (steal): rates are low"
                               " by up to that much, and peak fractions uncertain\n",
                               100 * steal);
    std::cout << fmt::format("\n| test | tok/s (median of {}) | range | floor tok/s | of floor | GFLOP/s | of {} peak |\n"
                             "|---|---:|---:|---:|---:|---:|---:|\n",
                             o->runs, peak_kind);
    std::cout << fmt::format("| pp{} | {:.2f} | {} | | | {:.1f} | {:.2f} |\n", o->prefill, pp, range(prefill_tok_s),
                             prefill_flop_s / 1e9, prefill_flop_s / peak_op_s);
    std::cout << fmt::format("| tg{} @ {} | {:.2f} | {} | {:.2f} | {:.2f} | | |\n", o->decode, decode_from, tg, range(decode_tok_s),
                             floor_tok_s, tg / floor_tok_s);
    if (!batch_rows.empty()) {
      // A batched step reads the weights once: its floor is one token's floor for all B rows.
      // Near 1 the step is bandwidth-bound; well below, the B rows' arithmetic (compute) limits it.
      std::cout << fmt::format("\n| batch | aggregate tok/s | per sequence tok/s | x batch 1 | step vs weight-read floor | bound |\n"
                               "|---:|---:|---:|---:|---:|---|\n");
      const double one = batch_rows.front().batch == 1 ? batch_rows.front().aggregate_tok_s : tg;
      for (const BatchRow& r : batch_rows) {
        const double step_floor_fraction = r.per_sequence_tok_s / floor_tok_s;
        std::cout << fmt::format("| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} |\n", r.batch, r.aggregate_tok_s,
                                 r.per_sequence_tok_s, r.aggregate_tok_s / one, step_floor_fraction,
                                 step_floor_fraction >= 0.7 ? "bandwidth" : "compute");
      }
    }
    if (o->profile) {
      print_profile(fmt::format("prefill profile (per {}-token prefill, {} runs)", o->prefill, o->runs),
                    prefill_profile, o->runs);
      print_profile(fmt::format("decode profile (per token, {} tokens x {} runs)", o->decode, o->runs),
                    decode_profile, static_cast<double>(o->decode) * o->runs);
    }
    return Status::ok();
  };
}

}  // namespace og::cli
