// The small endpoints: /health, /metrics (Prometheus), /v1/models, /v1/models/{id}, /tokenize,
// /detokenize.
#pragma once

#include <atomic>
#include <string_view>

#include "http/exchange.h"
#include "serve/serve_context.h"

namespace og::serve {

void handle_health(bool ready, http::Exchange& ex);
// ctx null while the model loads (gauges read 0).
void handle_metrics(const Metrics& metrics, const ServeContext* ctx, http::Exchange& ex);
void handle_models(ServeContext& ctx, http::Exchange& ex);
// OpenAI's "retrieve model": `id` is the path's segment after /v1/models/, percent-encoded.
void handle_model(ServeContext& ctx, std::string_view id, http::Exchange& ex);
void handle_tokenize(ServeContext& ctx, const http::Request& req, http::Exchange& ex);
void handle_detokenize(ServeContext& ctx, const http::Request& req, http::Exchange& ex);

}  // namespace og::serve
