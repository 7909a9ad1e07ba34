#include "serve/completion_handler.h"

#include <fmt/format.h>

#include "serve/http_guard.h"
#include "serve/job.h"
#include "serve/openai_response.h"
#include "serve/sse_stream.h"

namespace og::serve {

void handle_completion(ServeContext& ctx, const http::Request& req, http::Exchange& ex, bool chat) {
  ParsedRequest p = parse_completion_request(req.body, chat);
  if (p.error) return send_error(ex, *p.error);
  CompletionRequest& r = p.request;
  if (!r.model.empty() && r.model != ctx.backend.model_name)
    return send_error(ex, {.status = 404, .message = fmt::format("The model '{}' does not exist", r.model), .param = "model",
                           .code = "model_not_found"});
  r.model = ctx.backend.model_name;
  std::shared_ptr<Job> job;
  if (auto e = start_job(ctx, std::move(r), job)) return send_error(ex, *e);
  ex.log_detail(fmt::format("prompt_tokens={}", job->prompt_tokens));

  // The client may leave at any time: cancel its job now rather than at the next write.
  // (The callback holds the job; it may run after this handler returned.)
  Metrics* metrics = &ctx.metrics;
  generate::Scheduler* scheduler = ctx.backend.scheduler.get();
  ex.on_client_gone([job, metrics, scheduler] {
    std::lock_guard lock(job->mu);
    if (job->done) return;
    metrics->client_disconnects.fetch_add(1);
    scheduler->cancel(job->seq_id);
  });
  if (job->request.stream) return stream_job(ctx, job, ex);

  {
    std::unique_lock lock(job->mu);
    job->cv.wait(lock, [&] { return job->done; });
  }
  const Result<generate::SequenceStats>& result = *job->result;
  if (ex.client_gone()) {
    // Nobody reads this; the access log shows 499 (nginx's "client closed request") and
    // how far the job got before it was cancelled.
    if (result.is_ok()) ex.log_detail(log_words(*job, *result));
    return send_error(ex, {.status = 499, .message = "the client closed the connection"});
  }
  if (!result.is_ok()) return send_error(ex, {.status = 500, .message = result.status().message(), .type = "server_error"});
  const generate::SequenceStats& st = *result;
  ex.log_detail(log_words(*job, st));
  const CompletionRequest& q = job->request;
  const ResponseIdentity id{.chat = q.chat, .id = job->id, .created = job->created, .model = q.model};
  ojson lp = q.logprobs ? logprobs_json(q.chat, job->logprobs, 0) : ojson(nullptr);
  if (job->parser) {
    std::vector<toolcall::ReplyEvent> events;
    job->parser->push(job->pending_text, events);
    job->parser->finish(events);
    const toolcall::Reply reply = toolcall::fold(events);
    return send_json(ex, to_text(reply_body(id, reply, std::move(lp), reply_finish_reason(!reply.calls.empty(), st.stop),
                                            usage_json(job->prompt_tokens, st))));
  }
  send_json(ex, to_text(completion_body(id, job->pending_text, std::move(lp), finish_reason(st.stop),
                                        usage_json(job->prompt_tokens, st))));
}

}  // namespace og::serve
