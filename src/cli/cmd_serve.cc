// `offgraph serve -m PROGRAM [...]`: the OpenAI-compatible server (src/serve). Binds first
// (loopback by default) so /health answers 503 while the program loads, prints where it
// listens once ready, logs one line per request to stderr, and on SIGTERM/SIGINT stops
// taking requests, lets running ones finish for --shutdown-grace seconds, cancels the rest
// and exits 0.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <filesystem>
#include <thread>

#include "cli/commands.h"
#include "generate/model_text.h"
#include "generate/scheduler.h"
#include "serve/server.h"
#include "toolcall/syntax.h"

namespace og::cli {
namespace {

struct ServeOptions {
  std::string program, tokenizer, alias, tool_call_format;
  SessionFlags session;
  serve::ServerOptions server;
  int32_t parallel = 4;
  int64_t ctx_size = 0;
  double shutdown_grace_s = 10;
  int64_t cache_ram_mib = 1024;
  std::string cache_dir;
  int64_t cache_dir_mib = 8192;
  std::optional<int64_t> snapshot_interval;  // deprecated flag
  double prompt_step_ratio = 3.0;
  bool log_steps = false;
};

// --log-steps: one line per batched step, to see what a step carried and what it cost
// (for tuning --parallel and judging the prompt-row budget on this machine).
void log_step(const generate::StepRecord& r) {
  std::fprintf(stderr, "step: decode %lld prompt %lld budget %lld | admit %.1f ms run %.1f ms after %.1f ms\n",
               static_cast<long long>(r.decode_rows), static_cast<long long>(r.prompt_rows),
               static_cast<long long>(r.prompt_row_budget), r.admit_seconds * 1e3, r.run_seconds * 1e3,
               r.after_seconds * 1e3);
}

Result<serve::Backend> load_backend(const ServeOptions& o) {
  OG_ASSIGN_OR_RETURN(StorageType kv, check_session_flags(o.session));
  OG_ASSIGN_OR_RETURN(auto model, runtime::Model::load(o.program, residency_of(o.session), math_of(o.session)));
  OG_ASSIGN_OR_RETURN(generate::ModelText text, generate::load_model_text(*model, o.tokenizer));
  if (!o.tool_call_format.empty()) {
    OG_ASSIGN_OR_RETURN(text.tool_syntax, toolcall::parse_tool_call_format(o.tool_call_format));
  }
  std::shared_ptr<runtime::PrefixCache> prefix_cache;
  if (o.cache_ram_mib > 0) {
    OG_ASSIGN_OR_RETURN(prefix_cache, runtime::PrefixCache::create({.budget_bytes = static_cast<uint64_t>(o.cache_ram_mib) << 20,
                                                                    .dir = o.cache_dir,
                                                                    .disk_budget_bytes = static_cast<uint64_t>(o.cache_dir_mib) << 20,
                                                                    .program_checksum = model->file().checksum(),
                                                                    .kv_type = kv,
                                                                    .fast_math = model->fast_math()}));
    if (!o.cache_dir.empty()) {
      const auto c = prefix_cache->counters();
      std::fprintf(stderr, "offgraph serve: --cache-dir %s: %llu prefix states on disk (%.1f MiB)\n", o.cache_dir.c_str(),
                   static_cast<unsigned long long>(c.disk_entries), static_cast<double>(c.disk_bytes) / (1 << 20));
    }
  }
  OG_ASSIGN_OR_RETURN(auto scheduler, generate::Scheduler::create(model, {.max_sequences = o.parallel,
                                                                          .max_ctx_len = o.ctx_size,
                                                                          .kv_dtype = kv,
                                                                          .threads = o.session.threads,
                                                                          .prompt_step_ratio = o.prompt_step_ratio,
                                                                          .prefix_cache = prefix_cache,
                                                                          .max_waiting = o.server.queue,
                                                                          .on_step = o.log_steps ? log_step : nullptr}));
  serve::Backend b{.scheduler = std::move(scheduler), .text = std::move(text)};
  b.model_name = o.alias.empty() ? std::filesystem::path(o.program).stem().string() : o.alias;
  b.ctx_len = o.ctx_size > 0 ? o.ctx_size : model->max_ctx_len();
  return b;
}

}  // namespace

Runner add_serve(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server (chat/completions, completions, models, metrics)");
  auto o = std::make_shared<ServeOptions>();
  cmd->add_option("--model,-m", o->program, "program file")->required();
  cmd->add_option("--host", o->server.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", o->server.port, "port (0: any free port; the one chosen is printed)")->capture_default_str();
  cmd->add_option("--parallel,-P", o->parallel, "sequences generated at once (slots)")->capture_default_str();
  cmd->add_option("--ctx-size,-c", o->ctx_size, "context per sequence (default: the program's)");
  add_session_flags(cmd, o->session);
  cmd->add_option("--api-key", o->server.api_key, "require `Authorization: Bearer KEY` (not on /health, /metrics)");
  cmd->add_option("--max-body-bytes", o->server.max_body_bytes, "largest request body (413 above)")->capture_default_str();
  cmd->add_option("--queue", o->server.queue, "requests that may wait for a slot (429 above)")->capture_default_str();
  cmd->add_option("--timeout", o->server.timeout_s, "seconds a request body may take to arrive, and each write of an answer")
      ->capture_default_str();
  cmd->add_option("--header-timeout", o->server.header_timeout_s,
                  "seconds a request's header may take to arrive (also how long an idle keep-alive connection stays open)")
      ->capture_default_str();
  cmd->add_option("--shutdown-grace", o->shutdown_grace_s, "seconds running requests may finish after SIGTERM")->capture_default_str();
  cmd->add_option("--alias", o->alias, "model id to serve (default: the program's file name without extension)");
  cmd->add_option("--cache-ram", o->cache_ram_mib, "MiB of prompt-prefix cache states kept for reuse (0: no prefix cache)")
      ->capture_default_str();
  cmd->add_option("--cache-dir", o->cache_dir,
                  "also keep prefix cache states in files under DIR (per program and kv dtype), so a restarted server hits");
  cmd->add_option("--cache-dir-mb", o->cache_dir_mib, "MiB of prefix states kept in --cache-dir (least recently used deleted)")
      ->capture_default_str();
  // Kept so that scripts written for it still start: states of sliding-window programs now
  // serve every shorter prefix, so interval snapshots have nothing left to add.
  cmd->add_option("--prefix-snapshot-interval", o->snapshot_interval,
                  "no longer needed (ignored, with a warning): every prefix state serves any shorter prefix");
  cmd->add_option("--prompt-step-ratio", o->prompt_step_ratio,
                  "a step that carries prompt rows beside decoding streams may take up to 1 + this many decode "
                  "steps: more gives new requests their first token sooner, and running streams longer gaps")
      ->check(CLI::Range(0.01, 1000.0))
      ->capture_default_str();
  cmd->add_flag("--log-steps", o->log_steps, "log every batched step to stderr (rows, prompt-row budget, milliseconds)");
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer.json, model directory or program to use instead of the program's");
  cmd->add_option("--tool-call-format", o->tool_call_format,
                  "tool-call syntax instead of the program's: generic_json, or a JSON object (or file) as `inspect` shows it");
  return [o]() -> Status {
    if (o->parallel < 1) return usage_error("--parallel {} must be at least 1", o->parallel);
    if (o->ctx_size < 0) return usage_error("--ctx-size {} must be >= 0", o->ctx_size);
    if (auto kv = check_session_flags(o->session); !kv.is_ok()) return kv.status();
    if (o->cache_ram_mib < 0) return usage_error("--cache-ram {} must be >= 0", o->cache_ram_mib);
    if (o->cache_dir_mib < 1) return usage_error("--cache-dir-mb {} must be at least 1", o->cache_dir_mib);
    if (!o->tool_call_format.empty())  // refused before anything binds or loads
      if (auto f = toolcall::parse_tool_call_format(o->tool_call_format); !f.is_ok()) return f.status();
    if (!o->cache_dir.empty() && o->cache_ram_mib == 0) return usage_error("--cache-dir needs the prefix cache (--cache-ram > 0)");
    if (o->snapshot_interval && *o->snapshot_interval < 1)
      return usage_error("--prefix-snapshot-interval {} must be at least 1", *o->snapshot_interval);
    if (o->snapshot_interval)
      std::fprintf(stderr, "warning: --prefix-snapshot-interval is ignored: every prefix state now serves any shorter prefix\n");
    if (!(o->shutdown_grace_s >= 0)) return usage_error("--shutdown-grace {} must be >= 0", o->shutdown_grace_s);
    if (o->server.port < 0 || o->server.port > 65535) return usage_error("--port {} must be in [0, 65535]", o->server.port);
    o->server.http_threads = o->parallel + o->server.queue + 4;
    // Signals go to one thread (sigtimedwait below): block them before any thread starts.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);
    OG_ASSIGN_OR_RETURN(auto server, serve::Server::bind(o->server));
    std::fprintf(stderr, "offgraph serve: loading %s (port %d answers /health with 503 until ready)\n", o->program.c_str(),
                 server->port());
    std::atomic<bool> finished{false};
    Status load_status;
    std::thread loader([&] {
      auto b = load_backend(*o);
      if (!b.is_ok()) {
        load_status = b.status();
        server->shutdown(std::chrono::milliseconds(0));
        return;
      }
      const std::string name = b->model_name;
      const long long ctx = b->ctx_len;
      const std::string math = b->scheduler->model().math_name();
      const std::string kv(storage_type_name(b->scheduler->kv_dtype()));
      server->set_backend(std::move(b).value());
      std::fprintf(stderr,
                   "offgraph serve: listening on http://%s:%d (model %s, %d slots, context %lld, math %s, kv %s)\n",
                   o->server.host.c_str(), server->port(), name.c_str(), o->parallel, ctx, math.c_str(), kv.c_str());
    });
    std::thread signals([&] {
      while (!finished.load()) {
        timespec ts{0, 100 * 1000 * 1000};
        const int sig = sigtimedwait(&set, nullptr, &ts);
        if (sig == SIGTERM || sig == SIGINT) {
          std::fprintf(stderr, "offgraph serve: %s: no new requests; finishing running ones (up to %.0f s)\n",
                       sig == SIGTERM ? "SIGTERM" : "SIGINT", o->shutdown_grace_s);
          server->shutdown(std::chrono::milliseconds(static_cast<int64_t>(o->shutdown_grace_s * 1000)));
          return;
        }
      }
    });
    server->run();
    finished = true;
    loader.join();
    signals.join();
    server.reset();
    if (load_status.is_ok()) std::fprintf(stderr, "offgraph serve: stopped\n");
    return load_status;
  };
}

}  // namespace og::cli
