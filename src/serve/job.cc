#include "serve/job.h"

#include <cctype>
#include <random>

#include <fmt/format.h>

#include "generate/stop_rules.h"
#include "generate/text_generation.h"
#include "constrain/json_schema.h"
#include "toolcall/framed_calls.h"
#include "toolcall/registry.h"

namespace og::serve {
namespace {

using Clock = std::chrono::steady_clock;

std::string random_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}", prefix, rng());
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The rendered chat cut right after the final (assistant) message's content, so the reply
// continues it: transformers' apply_chat_template(continue_final_message=True), which looks
// for the content stripped (templates trim it) and keeps its own trailing space when the
// template did.
std::optional<std::string> cut_after_final_message(const std::string& rendered, const std::string& content) {
  const auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  size_t b = 0, e = content.size();
  while (b < e && ws(content[b])) ++b;
  while (e > b && ws(content[e - 1])) --e;
  const std::string stripped = content.substr(b, e - b);
  const size_t at = rendered.rfind(stripped);
  if (stripped.empty() || at == std::string::npos) return std::nullopt;
  const std::string_view lstripped = std::string_view(content).substr(b);
  const bool kept = rendered.compare(at, lstripped.size(), lstripped) == 0;
  return rendered.substr(0, at + (kept ? lstripped.size() : stripped.size()));
}

// The chat as the template renders it with options `o`: the messages as sent, or with tools
// or tool messages the JSON messages (a format the template does not tell the model gets a
// system message saying it; tools in the context).
Result<std::string> render_chat(const generate::ModelText& t, const CompletionRequest& r, chat::RenderOptions o) {
  if (r.messages_json.empty()) {
    std::vector<chat::Message> msgs;
    for (const auto& m : r.messages) msgs.push_back({m.role, m.content});
    return t.chat_template->render(msgs, o);
  }
  nlohmann::ordered_json messages = r.messages_json;
  const toolcall::Format* format = toolcall::find_format(t.tool_syntax.format);
  const std::string hint = r.tools.active() && format ? format->hint(tool_set(r.tools)) : "";
  if (!hint.empty()) {
    if (!messages.empty() && messages[0]["role"] == "system" && messages[0]["content"].is_string())
      messages[0]["content"] = messages[0]["content"].get<std::string>() + "\n\n" + hint;
    else
      messages.insert(messages.begin(), nlohmann::ordered_json{{"role", "system"}, {"content", hint}});
  }
  if (t.tool_syntax.arguments_as_string)  // the template concatenates `arguments`: JSON text, as the client sent it
    for (auto& m : messages)
      if (m.contains("tool_calls"))
        for (auto& c : m["tool_calls"])
          if (c["function"].contains("arguments") && !c["function"]["arguments"].is_string())
            c["function"]["arguments"] = c["function"]["arguments"].dump();
  if (!r.tools.tools.empty()) o.extra_context["tools"] = r.tools.tools;
  auto rendered = t.chat_template->render_json(messages, o);
  if (!rendered.is_ok()) {  // clients send `content: null` beside tool_calls; many templates need a string
    bool any_null = false;
    for (auto& m : messages)
      if (m.contains("content") && m["content"].is_null()) m["content"] = "", any_null = true;
    if (any_null) rendered = t.chat_template->render_json(messages, o);
  }
  return rendered;
}

// The prompt's token ids: chat messages through the template, text through the tokenizer
// (its special tokens added), or ids as given; for chat, whether the prompt ends inside the
// reasoning the template opens (per request: chat_template_kwargs can change it). Errors
// name the field they came from.
std::optional<ApiError> prompt_ids(const generate::ModelText& t, const CompletionRequest& r, std::vector<int32_t>& ids,
                                   bool& opens_reasoning) {
  const char* param = r.chat ? "messages" : "prompt";
  opens_reasoning = false;
  Result<std::vector<int32_t>> enc = std::vector<int32_t>{};
  if (r.chat) {
    if (!t.chat_template) return invalid_request("the model has no chat template; use /v1/completions", param);
    chat::RenderOptions o = t.render;
    o.add_generation_prompt = r.add_generation_prompt;
    for (const auto& [k, v] : r.template_kwargs.items()) o.extra_context[k] = v;
    Result<std::string> rendered = render_chat(t, r, o);
    if (!rendered.is_ok()) return invalid_request("the chat template refused the messages: " + rendered.status().message(), param);
    if (r.continue_final_message) {
      auto cut = cut_after_final_message(*rendered, r.messages.back().content);
      if (!cut)
        return invalid_request("continue_final_message: the final message's content does not appear in the rendered chat "
                               "(the template drops it, or it is empty)",
                               "continue_final_message");
      *rendered = std::move(*cut);
    }
    const toolcall::ToolCallSyntax& s = t.tool_syntax;
    if (s.has_reasoning()) {
      size_t e = rendered->size();
      while (e > 0 && std::isspace(static_cast<unsigned char>((*rendered)[e - 1]))) --e;
      opens_reasoning = std::string_view(*rendered).substr(0, e).ends_with(s.reasoning_open);
    }
    // The template writes BOS itself: encode without adding special tokens, as transformers does.
    enc = t.tokenizer.encode(*rendered, false);
    if (!enc.is_ok()) return invalid_request(enc.status().message(), param);
  } else if (r.prompt_is_tokens) {
    enc = r.prompt_tokens;
  } else {
    enc = generate::prompt_tokens(t, r.prompt_text);
    if (!enc.is_ok()) return invalid_request(enc.status().message(), param);
  }
  ids = std::move(enc).value();
  return std::nullopt;
}

// The scheduler decides; this only words its refusal as OpenAI does.
ApiError refusal_error(generate::Refusal why, const Status& status, const CompletionRequest& r, int64_t n, int64_t ctx) {
  const char* param = r.chat ? "messages" : "prompt";
  switch (why) {
    case generate::Refusal::kQueueFull:
      return {.status = 429, .message = status.message() + "; retry later", .type = "rate_limit_error", .code = "queue_full"};
    case generate::Refusal::kContextExceeded:
      if (n < ctx)
        return invalid_request(fmt::format("This model's maximum context length is {} tokens; you requested {} tokens "
                                           "({} in the prompt, {} for the completion)",
                                           ctx, n + r.max_tokens, n, r.max_tokens),
                               "max_tokens", "context_length_exceeded");
      return invalid_request(fmt::format("This model's maximum context length is {} tokens; the prompt has {} tokens, "
                                         "leaving no room for a completion",
                                         ctx, n),
                             param, "context_length_exceeded");
    case generate::Refusal::kBadToken:
    case generate::Refusal::kInvalid:
    case generate::Refusal::kNone:
      break;
  }
  return invalid_request(status.message(), param);
}

}  // namespace

void JobRegistry::add(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mu_);
  jobs_.insert(job);
}

void JobRegistry::remove(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mu_);
  jobs_.erase(job);
}

size_t JobRegistry::size() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

void JobRegistry::cancel_all(generate::Scheduler& scheduler) {
  std::lock_guard lock(mu_);
  for (const auto& j : jobs_) {
    std::lock_guard jl(j->mu);
    if (j->seq_id) scheduler.cancel(j->seq_id);
  }
}

std::string log_words(const Job& job, const generate::SequenceStats& st) {
  std::string words = fmt::format("completion_tokens={} ttft={:.1f}ms", st.generated_tokens, st.first_token_seconds * 1e3);
  if (st.snapshot_seconds > 0) words += fmt::format(" snapshots={:.1f}ms", st.snapshot_seconds * 1e3);
  return words;
}

std::optional<ApiError> start_job(ServeContext& ctx, CompletionRequest r, std::shared_ptr<Job>& out) {
  std::vector<int32_t> ids;
  bool opens_reasoning = false;
  if (auto e = prompt_ids(ctx.backend.text, r, ids, opens_reasoning)) return e;
  // Chat replies are read back by the program's format when tools are active or the template
  // writes reasoning; the grammar under tools is that format's.
  const generate::ModelText& text = ctx.backend.text;
  const toolcall::Format* format = toolcall::find_format(text.tool_syntax.format);
  toolcall::ToolSet tools = tool_set(r.tools);
  if (tools.active()) tools.response_schema = r.json_schema;
  // The syntax as this prompt left it: inside the reasoning or not (the template's default
  // prompt decided the stored flag; this request's variables may not agree).
  toolcall::ToolCallSyntax syntax = text.tool_syntax;
  if (syntax.has_reasoning()) syntax.starts_in_reasoning = opens_reasoning;
  std::unique_ptr<toolcall::ReplyParser> parser;
  if (r.chat && format && (tools.active() || syntax.has_reasoning()))
    parser = format->parser(syntax, tools.active() ? &tools : nullptr, text.grammars->specials());
  auto job = std::make_shared<Job>(ctx.backend.text.tokenizer, r.stop, std::move(parser));
  job->id = random_id(r.chat ? "chatcmpl-" : "cmpl-");
  job->created = unix_now();
  job->prompt_tokens = static_cast<int64_t>(ids.size());
  // The echoed prompt leads the text; with logprobs it waits for them (below).
  const std::string echo_text = r.prompt_is_tokens ? ctx.backend.text.tokenizer.decode(ids) : r.prompt_text;
  if (r.echo && !r.logprobs) job->pending_text = echo_text;
  const int32_t top = r.logprobs ? r.top_logprobs : -1;
  job->request = std::move(r);

  generate::SequenceRequest sr;
  sr.prompt = std::move(ids);
  sr.options.max_tokens = static_cast<int32_t>(job->request.max_tokens);
  sr.options.sampling = job->request.sampling;
  if (!job->request.ignore_eos) sr.options.stop_ids = ctx.backend.text.stop_ids;
  for (int32_t id : job->request.stop_token_ids)
    if (!generate::is_stop_id(sr.options, id)) sr.options.stop_ids.push_back(id);
  // The reply's grammar: the tools' (their calls, or under tool_choice auto free text or
  // response_format's JSON), else response_format's JSON (after the reasoning a chat
  // template's generation prompt opens), else none.
  const std::optional<nlohmann::ordered_json>& schema = job->request.json_schema;
  std::optional<toolcall::ReplyGrammar> reply;
  const bool by_tools = tools.active() && format;
  if (by_tools) {
    reply = format->grammar(syntax, tools, text.grammars->specials());
  } else if (schema && job->request.chat) {
    reply = toolcall::answer_grammar(syntax, *schema, text.grammars->specials());
  } else if (schema) {
    reply = toolcall::ReplyGrammar{.schema = *schema};
  }
  if (reply) {
    auto masks = reply->schema ? text.grammars->json_schema(*reply->schema) : text.grammars->framed_json(*reply->framed);
    if (!masks.is_ok()) {
      // A refused schema inside a larger grammar is named as response_format's own: compiled
      // alone only now, when the whole failed (the cache holds the whole, not the part).
      if (schema && (reply->framed || by_tools))
        if (auto alone = constrain::compile_json_schema(*schema); !alone.is_ok())
          return invalid_request(alone.status().message(), "response_format.json_schema.schema");
      return invalid_request(masks.status().message(), by_tools ? "tools" : "response_format.json_schema.schema");
    }
    sr.options.sampling.grammar = *masks;
    sr.options.sampling.grammar_trigger = reply->trigger;
    sr.options.sampling.grammar_pause_open = reply->pause_open;
    sr.options.sampling.grammar_pause_close = reply->pause_close;
    sr.options.sampling.grammar_starts_paused = reply->starts_paused;
    sr.options.sampling.grammar_required = reply->required;
  }
  Job* j = job.get();
  Metrics* metrics = &ctx.metrics;
  const tokenizer::Tokenizer* tok = &ctx.backend.text.tokenizer;
  if (job->request.echo && job->request.logprobs) {
    // Each prompt token's logprob from the row before it; once the last row is in, the
    // prompt's text and logprobs go out together, ahead of the reply's.
    const auto V = static_cast<size_t>(ctx.backend.scheduler->model().vocab_size());
    sr.on_prompt_logits = [j, top, tok, V, echo_text, prompt = sr.prompt](int64_t first, std::span<const float> rows) {
      const auto n = static_cast<int64_t>(rows.size() / V);
      std::vector<generate::TokenLogprob> lps;
      if (first == 0) {
        const int32_t id = prompt[0];
        lps.push_back({.token = tok->decode(std::span<const int32_t>(&id, 1), false), .unconditioned = true});
      }
      for (int64_t r = 0; r < n && first + r + 1 < static_cast<int64_t>(prompt.size()); ++r)
        lps.push_back(generate::logprob_of(prompt[static_cast<size_t>(first + r + 1)], rows.subspan(static_cast<size_t>(r) * V, V),
                                           top, *tok));
      std::lock_guard lock(j->mu);
      j->logprobs.insert(j->logprobs.end(), std::make_move_iterator(lps.begin()), std::make_move_iterator(lps.end()));
      if (first + n == static_cast<int64_t>(prompt.size())) j->pending_text = echo_text + j->pending_text;
    };
  }
  sr.on_token = [metrics, j, top, tok](int32_t token, std::span<const float> logits) -> bool {
    const auto now = Clock::now();
    if (j->any_token) metrics->inter_token_latency.observe(std::chrono::duration<double>(now - j->last_token).count());
    j->any_token = true;
    j->last_token = now;
    metrics->generation_tokens.fetch_add(1);
    std::optional<generate::TokenLogprob> lp;
    if (top >= 0) lp = generate::logprob_of(token, logits, top, *tok);
    auto piece = j->text.push(token);
    {
      std::lock_guard lock(j->mu);
      if (piece.is_ok()) j->pending_text += *piece;
      if (lp) j->logprobs.push_back(std::move(*lp));
    }
    j->cv.notify_all();
    return piece.is_ok() && !j->text.stopped();
  };
  std::weak_ptr<Job> weak = job;
  JobRegistry* jobs = &ctx.jobs;
  sr.on_done = [metrics, jobs, weak](const Result<generate::SequenceStats>& result) {
    auto j = weak.lock();  // held by the registry until here
    if (!j) return;
    const std::string tail = j->text.finish();
    if (result.is_ok()) {
      metrics->requests_ok.fetch_add(1);
      metrics->prompt_tokens.fetch_add(static_cast<uint64_t>(result->prompt_tokens));
      metrics->prefix_cache_queries.fetch_add(static_cast<uint64_t>(result->prompt_tokens));
      metrics->prefix_cache_hits.fetch_add(static_cast<uint64_t>(result->cached_tokens));
      if (result->generated_tokens > 0) metrics->time_to_first_token.observe(result->first_token_seconds);
      metrics->e2e_latency.observe(result->total_seconds);
    } else {
      metrics->requests_error.fetch_add(1);
    }
    jobs->remove(j);
    {
      std::lock_guard lock(j->mu);
      j->pending_text += tail;
      j->done = true;
      j->result = result;
    }
    j->cv.notify_all();
  };

  const int64_t n = static_cast<int64_t>(sr.prompt.size());
  ctx.jobs.add(job);
  const generate::Submission sub = ctx.backend.scheduler->submit(std::move(sr));
  if (!sub.is_ok()) {
    ctx.jobs.remove(job);
    return refusal_error(sub.refusal(), sub.status(), job->request, n, ctx.backend.ctx_len);
  }
  {
    std::lock_guard lock(job->mu);
    job->seq_id = *sub;
  }
  if (ctx.draining.load()) ctx.backend.scheduler->cancel(*sub);
  out = std::move(job);
  return std::nullopt;
}

}  // namespace og::serve
