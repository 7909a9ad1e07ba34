#include "serve/info_routes.h"

#include <chrono>

#include "serve/http_guard.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"

namespace og::serve {

void handle_health(bool ready, http::Exchange& ex) {
  if (!ready) return send_error(ex, {.status = 503, .message = "the model is loading", .type = "server_error", .code = "unavailable"});
  send_json(ex, R"({"status":"ok"})");
}

void handle_metrics(const Metrics& metrics, const ServeContext* ctx, http::Exchange& ex) {
  Gauges g;
  if (ctx) {
    g.queued = static_cast<double>(ctx->backend.scheduler->queued());
    g.running = static_cast<double>(ctx->backend.scheduler->running());
    g.kv_cache_usage = ctx->backend.scheduler->cache_utilisation();
  }
  ex.respond({.status = 200, .content_type = "text/plain; version=0.0.4", .body = metrics.render(g)});
}

void handle_models(ServeContext& ctx, http::Exchange& ex) {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ojson m = {{"id", ctx.backend.model_name}, {"object", "model"}, {"created", now}, {"owned_by", "offgraph"},
             {"meta", {{"n_ctx", ctx.backend.ctx_len}, {"n_vocab", ctx.backend.scheduler->model().vocab_size()},
                       {"math", ctx.backend.scheduler->model().math_name()},
                       {"kv_dtype", storage_type_name(ctx.backend.scheduler->kv_dtype())}}}};
  send_json(ex, to_text(ojson{{"object", "list"}, {"data", ojson::array({m})}}));
}

void handle_tokenize(ServeContext& ctx, const http::Request& req, http::Exchange& ex) {
  TokenizeRequest t;
  if (auto e = parse_tokenize(req.body, t)) return send_error(ex, *e);
  auto ids = ctx.backend.text.tokenizer.encode(t.content, t.add_special);
  if (!ids.is_ok()) return send_error(ex, invalid_request(ids.status().message(), "content"));
  send_json(ex, ojson{{"tokens", *ids}}.dump());
}

void handle_detokenize(ServeContext& ctx, const http::Request& req, http::Exchange& ex) {
  std::vector<int32_t> ids;
  if (auto e = parse_detokenize(req.body, ids)) return send_error(ex, *e);
  send_json(ex, to_text(ojson{{"content", ctx.backend.text.tokenizer.decode(ids, false)}}));
}

}  // namespace og::serve
