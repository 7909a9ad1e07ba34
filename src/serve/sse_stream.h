// A job's answer as Server-Sent Events, as OpenAI streams it: `data: {chunk}\n\n` per piece
// of text (chat: a first chunk with the role), a last chunk with finish_reason, a usage
// chunk when asked for, then `data: [DONE]\n\n`. Runs on the handler's thread until the job
// is done or the client is gone (then the job is cancelled).
#pragma once

#include <memory>

#include "http/exchange.h"
#include "serve/job.h"

namespace og::serve {

void stream_job(ServeContext& ctx, const std::shared_ptr<Job>& job, http::Exchange& ex);

}  // namespace og::serve
