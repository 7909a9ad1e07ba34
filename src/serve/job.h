// One completion request on its way through the scheduler. start_job() turns the parsed
// request into prompt ids and submits them; the scheduler's callbacks (on its loop thread)
// turn tokens into text through generate::TextStream and hand it, with logprobs, to the
// HTTP thread that waits on the job (completion_handler or sse_stream).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "generate/logprobs.h"
#include "generate/text_stream.h"
#include "serve/openai_request.h"
#include "serve/serve_context.h"
#include "toolcall/reply_parser.h"

namespace og::serve {

struct Job {
  // parser: the reply's reader (tools, reasoning), or null for plain text; specials are then
  // marked in the text for it.
  Job(const tokenizer::Tokenizer& tokenizer, std::vector<std::string> stops, std::unique_ptr<toolcall::ReplyParser> parser)
      : text(tokenizer, std::move(stops), parser != nullptr), parser(std::move(parser)) {}
  CompletionRequest request;
  std::string id;                      // chatcmpl-... / cmpl-...
  int64_t created = 0;                 // unix seconds
  int64_t prompt_tokens = 0;
  // Loop thread only.
  generate::TextStream text;
  // The writer's (the HTTP thread that answers): reads pending_text into content, reasoning
  // and tool calls.
  std::unique_ptr<toolcall::ReplyParser> parser;
  std::chrono::steady_clock::time_point last_token{};
  bool any_token = false;
  // Shared, under mu.
  std::mutex mu;
  std::condition_variable cv;
  uint64_t seq_id = 0;
  std::string pending_text;                       // emitted, not yet taken by the writer
  std::vector<generate::TokenLogprob> logprobs;   // not yet taken by the writer
  bool done = false;
  std::optional<Result<generate::SequenceStats>> result;
};

// Builds the prompt and submits it. On success `out` is the running job; else the error
// that refuses the request (nothing was submitted).
std::optional<ApiError> start_job(ServeContext& ctx, CompletionRequest request, std::shared_ptr<Job>& out);

// "completion_tokens=.. ttft=..ms [snapshots=..ms]" for the access log.
std::string log_words(const Job& job, const generate::SequenceStats& st);

}  // namespace og::serve
