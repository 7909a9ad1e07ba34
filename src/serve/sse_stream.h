// A request's answer as Server-Sent Events, as OpenAI streams it: `data: {chunk}\n\n` per
// piece of text (chat: a first chunk with the role), a last chunk with finish_reason, a usage
// chunk when asked for, then `data: [DONE]\n\n`. The choices of a request (n, several
// prompts) stream one after the other, each chunk naming its index; they were generated side
// by side, so a later choice's text is ready when its turn comes. Runs on the handler's
// thread until the jobs are done or the client is gone (then every job is cancelled).
#pragma once

#include <memory>
#include <vector>

#include "http/exchange.h"
#include "serve/job.h"

namespace og::serve {

// jobs: the request's choices in index order, n per prompt.
void stream_jobs(ServeContext& ctx, const std::vector<std::shared_ptr<Job>>& jobs, int32_t n, http::Exchange& ex);

// Cancels the jobs not done and waits until each is; logs what the first one had generated.
void cancel_jobs(ServeContext& ctx, const std::vector<std::shared_ptr<Job>>& jobs, http::Exchange* ex = nullptr);

}  // namespace og::serve
