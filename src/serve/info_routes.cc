#include "serve/info_routes.h"

#include <chrono>
#include <optional>
#include <string_view>

#include <fmt/format.h>

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

namespace {

// The model object of /v1/models and /v1/models/{id}.
ojson model_object(ServeContext& ctx) {
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // max_model_len: vLLM's field for the context, beside the reference server's meta.n_ctx.
  return {{"id", ctx.backend.model_name}, {"object", "model"}, {"created", now}, {"owned_by", "offgraph"},
          {"max_model_len", ctx.backend.ctx_len},
          {"meta", {{"n_ctx", ctx.backend.ctx_len}, {"n_vocab", ctx.backend.scheduler->model().vocab_size()},
                    {"math", ctx.backend.scheduler->model().math_name()},
                    {"kv_dtype", storage_type_name(ctx.backend.scheduler->kv_dtype())}}}};
}

// A path segment's %XX escapes decoded (clients encode ids such as "org/name" as
// "org%2Fname"); nullopt when an escape is malformed.
std::optional<std::string> percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    auto hex = [](char c) {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    };
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) return std::nullopt;
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}

}  // namespace

void handle_models(ServeContext& ctx, http::Exchange& ex) {
  send_json(ex, to_text(ojson{{"object", "list"}, {"data", ojson::array({model_object(ctx)})}}));
}

void handle_model(ServeContext& ctx, std::string_view id, http::Exchange& ex) {
  const std::optional<std::string> name = percent_decoded(id);
  if (!name || *name != ctx.backend.model_name)
    return send_error(ex, {.status = 404, .message = fmt::format("The model '{}' does not exist", name.value_or(std::string(id))),
                           .param = "model", .code = "model_not_found"});
  send_json(ex, to_text(model_object(ctx)));
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
