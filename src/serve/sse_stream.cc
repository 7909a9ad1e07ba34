#include "serve/sse_stream.h"

#include "serve/openai_response.h"

namespace og::serve {
namespace {

std::string sse_event(const ojson& j) { return "data: " + to_text(j) + "\n\n"; }

}  // namespace

void cancel_jobs(ServeContext& ctx, const std::vector<std::shared_ptr<Job>>& jobs, http::Exchange* ex) {
  for (const auto& job : jobs) {
    std::unique_lock lock(job->mu);
    if (!job->done) ctx.backend.scheduler->cancel(job->seq_id);
  }
  for (size_t k = 0; k < jobs.size(); ++k) {
    std::unique_lock lock(jobs[k]->mu);
    jobs[k]->cv.wait(lock, [&] { return jobs[k]->done; });
    if (ex && k == 0 && jobs[k]->result->is_ok()) ex->log_detail(log_words(*jobs[k], **jobs[k]->result));
  }
}

namespace {

enum class Streamed { kDone, kFailed, kGone };

// One choice's chunks, its role first (chat) and its finish_reason last; `usage` gets its
// usage_json. kFailed: the job failed (the error event is written); kGone: the client is.
Streamed stream_choice_of(Job& job, int32_t index, http::Exchange& ex, ojson& usage) {
  const CompletionRequest& r = job.request;
  const ResponseIdentity id{.chat = r.chat, .id = job.id, .created = job.created, .model = r.model};
  const bool usage_null = r.include_usage;
  if (r.chat && !ex.write(sse_event(stream_chunk(
                    id, stream_choice(true, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr, index), usage_null))))
    return Streamed::kGone;
  size_t text_offset = 0;
  // A parsed reply (tools, reasoning) streams as the parser's deltas: content, reasoning and
  // each call's name, then its arguments in fragments.
  toolcall::ReplyParser* parser = job.parser.get();
  std::vector<generate::TokenLogprob> held_lps;
  bool made_calls = false;
  const auto write_deltas = [&](const std::vector<toolcall::ReplyEvent>& events, ojson lp) {
    for (ojson& delta : reply_deltas(events)) {
      if (!ex.write(sse_event(stream_chunk(id, stream_choice(true, std::move(delta), std::move(lp), nullptr, index), usage_null))))
        return false;
      lp = nullptr;
    }
    for (const auto& e : events) made_calls |= e.kind == toolcall::ReplyEvent::Kind::kCallStart;
    return true;
  };
  for (;;) {
    std::string text;
    std::vector<generate::TokenLogprob> lps;
    bool done = false;
    {
      std::unique_lock lock(job.mu);
      job.cv.wait(lock, [&] { return !job.pending_text.empty() || job.done; });
      text.swap(job.pending_text);
      // Logprobs travel with the text they produced (held-back text keeps them waiting).
      if (!text.empty() || job.done) lps.swap(job.logprobs);
      done = job.done;
    }
    if (parser && !text.empty()) {
      std::vector<toolcall::ReplyEvent> events;
      parser->push(text, events);
      // Logprobs wait for the parser's next delta (text it holds back keeps them waiting).
      held_lps.insert(held_lps.end(), std::make_move_iterator(lps.begin()), std::make_move_iterator(lps.end()));
      lps.clear();
      if (!events.empty()) {
        ojson lp = r.logprobs ? logprobs_json(r.chat, held_lps, 0) : ojson(nullptr);
        held_lps.clear();
        if (!write_deltas(events, std::move(lp))) return Streamed::kGone;
      }
    } else if (!text.empty()) {
      ojson lp = r.logprobs ? logprobs_json(r.chat, lps, text_offset) : ojson(nullptr);
      ojson piece = r.chat ? ojson{{"content", text}} : ojson(text);
      text_offset += text.size();
      lps.clear();
      if (!ex.write(sse_event(stream_chunk(id, stream_choice(r.chat, std::move(piece), std::move(lp), nullptr, index), usage_null))))
        return Streamed::kGone;
    }
    if (done) break;
  }
  const Result<generate::SequenceStats>& result = *job.result;
  if (!result.is_ok()) {
    ex.write(sse_event(ApiError{.status = 500, .message = result.status().message(), .type = "server_error"}.to_json()));
    return Streamed::kFailed;
  }
  const generate::SequenceStats& st = *result;
  if (index == 0) ex.log_detail(log_words(job, st));
  std::vector<generate::TokenLogprob> lps;
  {
    std::lock_guard lock(job.mu);
    lps.swap(job.logprobs);
  }
  if (parser) {  // logprobs the parser's deltas did not carry go with the finish chunk
    held_lps.insert(held_lps.end(), std::make_move_iterator(lps.begin()), std::make_move_iterator(lps.end()));
    lps = std::move(held_lps);
  }
  ojson lp = r.logprobs && !lps.empty() ? logprobs_json(r.chat, lps, text_offset) : ojson(nullptr);
  ojson empty = r.chat ? ojson::object() : ojson("");
  const char* finish = finish_reason(st.stop);
  if (parser) {
    std::vector<toolcall::ReplyEvent> events;
    parser->finish(events);
    if (!write_deltas(events, nullptr)) return Streamed::kGone;
    finish = reply_finish_reason(made_calls, st.stop);
  }
  if (!ex.write(sse_event(stream_chunk(id, stream_choice(r.chat, std::move(empty), std::move(lp), finish, index), usage_null))))
    return Streamed::kGone;
  usage = usage_json(job.prompt_tokens, st);
  return Streamed::kDone;
}

}  // namespace

void stream_jobs(ServeContext& ctx, const std::vector<std::shared_ptr<Job>>& jobs, int32_t n, http::Exchange& ex) {
  const CompletionRequest& r = jobs.front()->request;
  http::Headers headers;
  headers.add("Cache-Control", "no-cache");
  if (!ex.begin_stream(200, "text/event-stream", std::move(headers))) return cancel_jobs(ctx, jobs, &ex);
  std::vector<ojson> usages(jobs.size());
  for (size_t k = 0; k < jobs.size(); ++k) {
    const Streamed s = stream_choice_of(*jobs[k], static_cast<int32_t>(k), ex, usages[k]);
    if (s == Streamed::kGone) return cancel_jobs(ctx, jobs, &ex);
    if (s == Streamed::kFailed) {  // the others are not worth finishing
      cancel_jobs(ctx, jobs);
      ex.write("data: [DONE]\n\n");
      return ex.end_stream();
    }
  }
  if (r.include_usage) {
    const ResponseIdentity id{.chat = r.chat, .id = jobs.front()->id, .created = jobs.front()->created, .model = r.model};
    ojson u = stream_chunk(id, nullptr, false);
    u["usage"] = choices_usage(usages, n);
    if (!ex.write(sse_event(u))) return;
  }
  ex.write("data: [DONE]\n\n");
  ex.end_stream();
}

}  // namespace og::serve
