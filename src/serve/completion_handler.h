// POST /v1/chat/completions and /v1/completions: one request from body to answer. Parse
// (openai_request), check the model name, submit (job), then either stream (sse_stream) or
// wait and write the whole body (openai_response). A client that leaves, streamed or not,
// has its job cancelled at once (the scheduler frees the slot at its next step).
#pragma once

#include "http/exchange.h"
#include "serve/serve_context.h"

namespace og::serve {

void handle_completion(ServeContext& ctx, const http::Request& req, http::Exchange& ex, bool chat);

}  // namespace og::serve
