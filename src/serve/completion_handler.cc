#include "serve/completion_handler.h"

#include <fmt/format.h>

#include "serve/http_guard.h"
#include "serve/job.h"
#include "serve/openai_response.h"
#include "serve/sse_stream.h"

namespace og::serve {

namespace {

// A finished job's whole response (one choice, index 0).
ojson choice_body(Job& job) {
  const generate::SequenceStats& st = **job.result;
  const CompletionRequest& q = job.request;
  const ResponseIdentity id{.chat = q.chat, .id = job.id, .created = job.created, .model = q.model};
  ojson lp = q.logprobs ? logprobs_json(q.chat, job.logprobs, 0) : ojson(nullptr);
  if (job.parser) {
    std::vector<toolcall::ReplyEvent> events;
    job.parser->push(job.pending_text, events);
    job.parser->finish(events);
    const toolcall::Reply reply = toolcall::fold(events);
    return reply_body(id, reply, std::move(lp), reply_finish_reason(!reply.calls.empty(), st.stop),
                      usage_json(job.prompt_tokens, st));
  }
  return completion_body(id, job.pending_text, std::move(lp), finish_reason(st.stop), usage_json(job.prompt_tokens, st));
}

}  // namespace

void handle_completion(ServeContext& ctx, const http::Request& req, http::Exchange& ex, bool chat) {
  ParsedRequest p = parse_completion_request(req.body, chat);
  if (p.error) return send_error(ex, *p.error);
  CompletionRequest& r = p.request;
  if (!r.model.empty() && r.model != ctx.backend.model_name)
    return send_error(ex, {.status = 404, .message = fmt::format("The model '{}' does not exist", r.model), .param = "model",
                           .code = "model_not_found"});
  r.model = ctx.backend.model_name;
  // One job per choice (n per prompt), submitted together: the scheduler batches them and the
  // prefix store shares their prompt.
  const int32_t n = r.n;
  std::vector<std::shared_ptr<Job>> jobs;
  int64_t prompt_tokens = 0;
  for (CompletionRequest& c : choice_requests(r)) {
    std::shared_ptr<Job> job;
    if (auto e = start_job(ctx, std::move(c), job)) {
      cancel_jobs(ctx, jobs);
      return send_error(ex, *e);
    }
    if (jobs.size() % static_cast<size_t>(n) == 0) prompt_tokens += job->prompt_tokens;
    if (!jobs.empty()) job->id = jobs.front()->id, job->created = jobs.front()->created;  // one response
    jobs.push_back(std::move(job));
  }
  ex.log_detail(jobs.size() == 1 ? fmt::format("prompt_tokens={}", prompt_tokens)
                                 : fmt::format("prompt_tokens={} choices={}", prompt_tokens, jobs.size()));

  // The client may leave at any time: cancel its jobs now rather than at the next write.
  // (The callback holds the jobs; it may run after this handler returned.)
  Metrics* metrics = &ctx.metrics;
  generate::Scheduler* scheduler = ctx.backend.scheduler.get();
  ex.on_client_gone([jobs, metrics, scheduler] {
    bool any = false;
    for (const auto& job : jobs) {
      std::lock_guard lock(job->mu);
      if (job->done) continue;
      any = true;
      scheduler->cancel(job->seq_id);
    }
    if (any) metrics->client_disconnects.fetch_add(1);
  });
  if (jobs.front()->request.stream) return stream_jobs(ctx, jobs, n, ex);

  for (const auto& job : jobs) {
    std::unique_lock lock(job->mu);
    job->cv.wait(lock, [&] { return job->done; });
  }
  const Result<generate::SequenceStats>& first = *jobs.front()->result;
  if (ex.client_gone()) {
    // Nobody reads this; the access log shows 499 (nginx's "client closed request") and
    // how far the first choice got before it was cancelled.
    if (first.is_ok()) ex.log_detail(log_words(*jobs.front(), *first));
    return send_error(ex, {.status = 499, .message = "the client closed the connection"});
  }
  for (const auto& job : jobs)
    if (!job->result->is_ok())
      return send_error(ex, {.status = 500, .message = job->result->status().message(), .type = "server_error"});
  ex.log_detail(log_words(*jobs.front(), *first));
  ojson body;
  std::vector<ojson> usages;
  for (size_t k = 0; k < jobs.size(); ++k) {
    ojson one = choice_body(*jobs[k]);
    one["choices"][0]["index"] = k;
    usages.push_back(one["usage"]);
    if (k == 0) body = std::move(one);
    else body["choices"].push_back(std::move(one["choices"][0]));
  }
  if (jobs.size() > 1) body["usage"] = choices_usage(usages, n);
  send_json(ex, to_text(body));
}

}  // namespace og::serve
