#include "serve/sse_stream.h"

#include "serve/openai_response.h"

namespace og::serve {
namespace {

std::string sse_event(const ojson& j) { return "data: " + to_text(j) + "\n\n"; }

}  // namespace

void stream_job(ServeContext& ctx, const std::shared_ptr<Job>& job, http::Exchange& ex) {
  const CompletionRequest& r = job->request;
  const ResponseIdentity id{.chat = r.chat, .id = job->id, .created = job->created, .model = r.model};
  const bool usage_null = r.include_usage;
  generate::Scheduler& scheduler = *ctx.backend.scheduler;
  // The client is gone: cancel, and log what the job had generated when it stopped.
  auto cancel = [&] {
    std::unique_lock lock(job->mu);
    if (!job->done) scheduler.cancel(job->seq_id);
    job->cv.wait(lock, [&] { return job->done; });
    if (job->result->is_ok()) ex.log_detail(log_words(*job, **job->result));
  };
  http::Headers headers;
  headers.add("Cache-Control", "no-cache");
  if (!ex.begin_stream(200, "text/event-stream", std::move(headers))) return cancel();
  if (r.chat &&
      !ex.write(sse_event(stream_chunk(id, stream_choice(true, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr), usage_null))))
    return cancel();
  size_t text_offset = 0;
  // A parsed reply (tools, reasoning) streams as the parser's deltas: content, reasoning and
  // each call's name, then its arguments in fragments.
  toolcall::ReplyParser* parser = job->parser.get();
  std::vector<generate::TokenLogprob> held_lps;
  bool made_calls = false;
  const auto write_deltas = [&](const std::vector<toolcall::ReplyEvent>& events, ojson lp) {
    for (ojson& delta : reply_deltas(events)) {
      if (!ex.write(sse_event(stream_chunk(id, stream_choice(true, std::move(delta), std::move(lp), nullptr), usage_null))))
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
    std::optional<Result<generate::SequenceStats>> result;
    {
      std::unique_lock lock(job->mu);
      job->cv.wait(lock, [&] { return !job->pending_text.empty() || job->done; });
      text.swap(job->pending_text);
      // Logprobs travel with the text they produced (held-back text keeps them waiting).
      if (!text.empty() || job->done) lps.swap(job->logprobs);
      done = job->done;
      result = job->result;
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
        if (!write_deltas(events, std::move(lp))) return cancel();
      }
    } else if (!text.empty()) {
      ojson lp = r.logprobs ? logprobs_json(r.chat, lps, text_offset) : ojson(nullptr);
      ojson piece = r.chat ? ojson{{"content", text}} : ojson(text);
      text_offset += text.size();
      lps.clear();
      if (!ex.write(sse_event(stream_chunk(id, stream_choice(r.chat, std::move(piece), std::move(lp), nullptr), usage_null))))
        return cancel();
    }
    if (done) break;
  }
  const Result<generate::SequenceStats>& result = *job->result;
  if (!result.is_ok()) {
    ex.write(sse_event(ApiError{.status = 500, .message = result.status().message(), .type = "server_error"}.to_json()));
  } else {
    const generate::SequenceStats& st = *result;
    ex.log_detail(log_words(*job, st));
    std::vector<generate::TokenLogprob> lps;
    {
      std::lock_guard lock(job->mu);
      lps.swap(job->logprobs);
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
      if (!write_deltas(events, nullptr)) return;
      finish = reply_finish_reason(made_calls, st.stop);
    }
    if (!ex.write(sse_event(stream_chunk(id, stream_choice(r.chat, std::move(empty), std::move(lp), finish), usage_null))))
      return;
    if (r.include_usage) {
      ojson u = stream_chunk(id, nullptr, false);
      u["usage"] = usage_json(job->prompt_tokens, st);
      if (!ex.write(sse_event(u))) return;
    }
  }
  ex.write("data: [DONE]\n\n");
  ex.end_stream();
}

}  // namespace og::serve
