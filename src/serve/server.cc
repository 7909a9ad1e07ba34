#include "serve/server.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <random>

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "serve/connection_probe.h"
#include "serve/openai_schema.h"
#include "serve/sse.h"
#include "serve/stop_strings.h"

namespace og::serve {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What the access log line reports; set by the handler (and the stream writer) of the
// request the calling HTTP thread serves, printed by the logger on the same thread.
struct RequestLog {
  bool routed = false;
  Clock::time_point start{};
  int64_t prompt_tokens = -1, completion_tokens = -1;
  double ttft_s = -1;
  double snapshot_s = -1;  // prefix-cache snapshots taken during the request
};
thread_local RequestLog t_log;

bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !b.empty();
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(e.to_json().dump(), "application/json");
}

std::string random_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{:016x}", prefix, rng());
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct TokenLogprob {
  std::string token;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;
};

// log_softmax(logits)[token] and the `top` most likely tokens, from the logits it was sampled from.
TokenLogprob logprob_of(int32_t token, std::span<const float> logits, int32_t top, const tokenizer::Tokenizer& tok) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - mx);
  const double lse = mx + std::log(sum);
  auto text = [&](int32_t id) { return tok.decode(std::span<const int32_t>(&id, 1), false); };
  TokenLogprob out{.token = text(token), .logprob = static_cast<float>(logits[static_cast<size_t>(token)] - lse)};
  if (top > 0) {
    std::vector<int32_t> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    const size_t k = std::min<size_t>(static_cast<size_t>(top), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                      [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    for (size_t i = 0; i < k; ++i) out.top.emplace_back(text(ids[i]), static_cast<float>(logits[ids[i]] - lse));
  }
  return out;
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

// Chat: {"content": [{token, logprob, bytes, top_logprobs}]}.
json chat_logprobs(const std::vector<TokenLogprob>& lps) {
  json content = json::array();
  for (const auto& t : lps) {
    json top = json::array();
    for (const auto& [s, lp] : t.top) top.push_back({{"token", s}, {"logprob", lp}, {"bytes", bytes_of(s)}});
    content.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", bytes_of(t.token)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

// Completions (legacy): {tokens, token_logprobs, top_logprobs, text_offset}.
json completion_logprobs(const std::vector<TokenLogprob>& lps, size_t offset) {
  json tokens = json::array(), lp = json::array(), top = json::array(), offsets = json::array();
  for (const auto& t : lps) {
    tokens.push_back(t.token);
    lp.push_back(t.logprob);
    json m = json::object();
    for (const auto& [s, l] : t.top) m[s] = l;
    top.push_back(m);
    offsets.push_back(offset);
    offset += t.token.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", lp}, {"top_logprobs", top}, {"text_offset", offsets}};
}

const char* finish_reason(generate::StopReason r) {
  switch (r) {
    case generate::StopReason::kStopToken:
    case generate::StopReason::kCallback: return "stop";
    default: return "length";
  }
}

}  // namespace

// One request that reached the scheduler. Fields under "loop thread" are touched only by
// the scheduler's callbacks; the rest under mu.
struct Job {
  Job(tokenizer::Tokenizer tok, std::vector<std::string> stops) : decoder(std::move(tok), true), stops(std::move(stops)) {}
  CompletionRequest request;
  std::string id;
  int64_t created = 0;
  int64_t prompt_tokens = 0;
  // loop thread
  tokenizer::StreamDecoder decoder;
  StopStringMatcher stops;
  Clock::time_point last_token{};
  bool any_token = false;
  std::vector<int32_t> generated;      // to decode the tail the stream decoder still holds
  size_t decoded_bytes = 0;            // bytes the stream decoder has returned
  // shared
  std::mutex mu;
  std::condition_variable cv;
  uint64_t seq_id = 0;
  std::string text;                    // emitted text not yet taken by the writer
  std::vector<TokenLogprob> logprobs;  // not yet taken by the writer
  bool done = false;
  std::optional<Result<generate::SequenceStats>> result;
};

struct Handlers {
  // Prompt ids of a request, or the error that refuses it.
  static std::optional<ApiError> prompt_ids(Server& s, const CompletionRequest& r, std::vector<int32_t>& ids) {
    const generate::ModelText& t = s.backend_->text;
    if (r.chat) {
      if (!t.chat_template) return invalid_request("the model has no chat template; use /v1/completions", "messages");
      std::vector<chat::Message> msgs;
      for (const auto& m : r.messages) msgs.push_back({m.role, m.content});
      chat::RenderOptions o = t.render;
      o.add_generation_prompt = true;
      auto text = t.chat_template->render(msgs, o);
      if (!text.is_ok()) return invalid_request("the chat template refused the messages: " + text.status().message(), "messages");
      auto enc = t.tokenizer.encode(*text, false);  // the template writes BOS itself
      if (!enc.is_ok()) return invalid_request(enc.status().message(), "messages");
      ids = std::move(*enc);
    } else if (r.prompt_is_tokens) {
      ids = r.prompt_tokens;
      const int32_t vocab = s.backend_->scheduler->model().vocab_size();
      for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] >= vocab) return invalid_request(fmt::format("token id {} at index {} is outside the vocabulary (size {})", ids[i], i, vocab), "prompt");
    } else {
      auto enc = t.tokenizer.encode(r.prompt_text, true);
      if (!enc.is_ok()) return invalid_request(enc.status().message(), "prompt");
      ids = std::move(*enc);
    }
    if (ids.empty()) return invalid_request("the prompt has no tokens", r.chat ? "messages" : "prompt");
    const int64_t ctx = s.backend_->ctx_len, n = static_cast<int64_t>(ids.size());
    if (n >= ctx)
      return invalid_request(fmt::format("This model's maximum context length is {} tokens; the prompt has {} tokens, "
                                         "leaving no room for a completion",
                                         ctx, n),
                             r.chat ? "messages" : "prompt", "context_length_exceeded");
    if (r.max_tokens > 0 && n + r.max_tokens > ctx)
      return invalid_request(fmt::format("This model's maximum context length is {} tokens; you requested {} tokens "
                                         "({} in the prompt, {} for the completion)",
                                         ctx, n + r.max_tokens, n, r.max_tokens),
                             "max_tokens", "context_length_exceeded");
    return std::nullopt;
  }

  static std::optional<ApiError> start(Server& s, CompletionRequest r, std::shared_ptr<Job>& out) {
    std::vector<int32_t> ids;
    if (auto e = prompt_ids(s, r, ids)) return e;
    if (s.in_flight_.fetch_add(1) >= s.capacity_) {
      s.in_flight_.fetch_sub(1);
      return ApiError{.status = 429,
                      .message = fmt::format("the server is at capacity ({} requests running or queued); retry later", s.capacity_),
                      .type = "rate_limit_error", .code = "queue_full"};
    }
    auto job = std::make_shared<Job>(s.backend_->text.tokenizer, r.stop);
    job->id = random_id(r.chat ? "chatcmpl-" : "cmpl-");
    job->created = unix_now();
    job->prompt_tokens = static_cast<int64_t>(ids.size());
    const int32_t top = r.logprobs ? r.top_logprobs : -1;
    job->request = std::move(r);
    generate::SequenceRequest sr;
    sr.prompt = std::move(ids);
    sr.options.max_tokens = static_cast<int32_t>(job->request.max_tokens);
    sr.options.sampling = job->request.sampling;
    sr.options.stop_ids = s.backend_->text.stop_ids;
    Job* j = job.get();
    Server* srv = &s;
    sr.on_token = [srv, j, top](int32_t token, std::span<const float> logits) -> bool {
      const auto now = Clock::now();
      if (j->any_token) srv->metrics_.inter_token_latency.observe(std::chrono::duration<double>(now - j->last_token).count());
      j->any_token = true;
      j->last_token = now;
      srv->metrics_.generation_tokens.fetch_add(1);
      std::optional<TokenLogprob> lp;
      if (top >= 0) lp = logprob_of(token, logits, top, srv->backend_->text.tokenizer);
      j->generated.push_back(token);
      auto piece = j->decoder.step(token);
      std::string emit;
      if (piece.is_ok()) {
        j->decoded_bytes += piece->size();
        emit = j->stops.push(*piece);
      }
      {
        std::lock_guard lock(j->mu);
        j->text += emit;
        if (lp) j->logprobs.push_back(std::move(*lp));
      }
      j->cv.notify_all();
      return !j->stops.stopped();
    };
    std::weak_ptr<Job> weak = job;
    sr.on_done = [srv, weak](const Result<generate::SequenceStats>& result) {
      auto j = weak.lock();  // held by jobs_ until here
      if (!j) return;
      // An incomplete character at the end decodes to U+FFFD, as decode() of all ids does.
      std::string tail;
      if (!j->stops.stopped()) {
        const std::string all = srv->backend_->text.tokenizer.decode(j->generated, true);
        if (all.size() > j->decoded_bytes) tail = j->stops.push(std::string_view(all).substr(j->decoded_bytes));
        tail += j->stops.flush();
      }
      if (result.is_ok()) {
        srv->metrics_.requests_ok.fetch_add(1);
        srv->metrics_.prompt_tokens.fetch_add(static_cast<uint64_t>(result->prompt_tokens));
        srv->metrics_.prefix_cache_queries.fetch_add(static_cast<uint64_t>(result->prompt_tokens));
        srv->metrics_.prefix_cache_hits.fetch_add(static_cast<uint64_t>(result->cached_tokens));
        if (result->generated_tokens > 0) srv->metrics_.time_to_first_token.observe(result->first_token_seconds);
        srv->metrics_.e2e_latency.observe(result->total_seconds);
      } else {
        srv->metrics_.requests_error.fetch_add(1);
      }
      // The slot is free before the client hears of it: a client's next request fits.
      {
        std::lock_guard lock(srv->jobs_mu_);
        srv->jobs_.erase(j);
      }
      srv->in_flight_.fetch_sub(1);
      {
        std::lock_guard lock(j->mu);
        j->text += tail;
        j->done = true;
        j->result = result;
      }
      j->cv.notify_all();
    };
    {
      std::lock_guard lock(s.jobs_mu_);
      s.jobs_.insert(job);
    }
    auto id = s.backend_->scheduler->submit(std::move(sr));
    if (!id.is_ok()) {
      {
        std::lock_guard lock(s.jobs_mu_);
        s.jobs_.erase(job);
      }
      s.in_flight_.fetch_sub(1);
      return invalid_request(id.status().message());
    }
    {
      std::lock_guard lock(job->mu);
      job->seq_id = *id;
    }
    if (s.draining_.load()) s.backend_->scheduler->cancel(*id);
    out = std::move(job);
    return std::nullopt;
  }

  static json usage(const Job& j, const generate::SequenceStats& st) {
    return {{"prompt_tokens", j.prompt_tokens},
            {"completion_tokens", st.generated_tokens},
            {"total_tokens", j.prompt_tokens + st.generated_tokens},
            {"prompt_tokens_details", {{"cached_tokens", st.cached_tokens}}}};
  }

  static json chunk(const Job& j, json choice, bool usage_null) {
    json c = {{"id", j.id},
              {"object", j.request.chat ? "chat.completion.chunk" : "text_completion"},
              {"created", j.created},
              {"model", j.request.model},
              {"choices", json::array({std::move(choice)})}};
    if (usage_null) c["usage"] = nullptr;
    return c;
  }

  static json choice_delta(const Job& j, json delta_or_text, json logprobs, json finish) {
    if (j.request.chat)
      return {{"index", 0}, {"delta", std::move(delta_or_text)}, {"logprobs", std::move(logprobs)}, {"finish_reason", std::move(finish)}};
    return {{"text", std::move(delta_or_text)}, {"index", 0}, {"logprobs", std::move(logprobs)}, {"finish_reason", std::move(finish)}};
  }

  static void completion(Server& s, const httplib::Request& req, httplib::Response& res, bool chat) {
    ParsedRequest p = parse_completion_request(req.body, chat);
    if (p.error) return send_error(res, *p.error);
    CompletionRequest& r = p.request;
    if (!r.model.empty() && r.model != s.backend_->model_name)
      return send_error(res, {.status = 404, .message = fmt::format("The model '{}' does not exist", r.model),
                              .param = "model", .code = "model_not_found"});
    r.model = s.backend_->model_name;
    std::shared_ptr<Job> job;
    if (auto e = start(s, std::move(r), job)) {
      if (e->status == 429) res.set_header("Retry-After", "1");
      return send_error(res, *e);
    }
    t_log.prompt_tokens = job->prompt_tokens;
    if (job->request.stream) return stream(s, res, job);

    // While the answer is generated, look every 100 ms whether the client is still there;
    // if it left, its sequence is cancelled at the next step and the slot freed.
    const auto probe = ConnectionProbe::find(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
    std::unique_lock lock(job->mu);
    while (!job->cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return job->done; })) {
      if (probe && probe->peer_closed()) {
        s.backend_->scheduler->cancel(job->seq_id);
        job->cv.wait(lock, [&] { return job->done; });
        // Nobody reads this; the log line shows 499 (nginx's "client closed request").
        return send_error(res, {.status = 499, .message = "the client closed the connection", .type = "invalid_request_error"});
      }
    }
    const auto& result = *job->result;
    if (!result.is_ok())
      return send_error(res, {.status = 500, .message = result.status().message(), .type = "server_error"});
    const generate::SequenceStats& st = *result;
    t_log.completion_tokens = st.generated_tokens;
    t_log.ttft_s = st.first_token_seconds;
    t_log.snapshot_s = st.snapshot_seconds;
    json choice;
    if (chat) {
      choice = {{"index", 0},
                {"message", {{"role", "assistant"}, {"content", job->text}}},
                {"logprobs", job->request.logprobs ? chat_logprobs(job->logprobs) : json(nullptr)},
                {"finish_reason", finish_reason(st.stop)}};
    } else {
      choice = {{"text", job->text},
                {"index", 0},
                {"logprobs", job->request.logprobs ? completion_logprobs(job->logprobs, 0) : json(nullptr)},
                {"finish_reason", finish_reason(st.stop)}};
    }
    json body = {{"id", job->id},
                 {"object", chat ? "chat.completion" : "text_completion"},
                 {"created", job->created},
                 {"model", job->request.model},
                 {"choices", json::array({choice})},
                 {"usage", usage(*job, st)}};
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  }

  static void stream(Server& s, httplib::Response& res, std::shared_ptr<Job> job) {
    struct State {
      bool started = false;
      size_t text_offset = 0;
    };
    auto state = std::make_shared<State>();
    Server* srv = &s;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [srv, job, state](size_t, httplib::DataSink& sink) -> bool {
          const CompletionRequest& r = job->request;
          const bool usage_null = r.include_usage;
          if (!state->started) {
            state->started = true;
            if (r.chat) {
              json first = chunk(*job, choice_delta(*job, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr), usage_null);
              if (!sse_write(sink, first)) return false;
            }
          }
          std::string text;
          std::vector<TokenLogprob> lps;
          bool done = false;
          std::optional<Result<generate::SequenceStats>> result;
          {
            std::unique_lock lock(job->mu);
            job->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return !job->text.empty() || job->done; });
            text.swap(job->text);
            // Logprobs travel with the text they produced (held-back text keeps them waiting).
            if (!text.empty() || job->done) lps.swap(job->logprobs);
            done = job->done;
            result = job->result;
          }
          if (!text.empty()) {
            json lp = nullptr;
            if (r.logprobs) lp = r.chat ? chat_logprobs(lps) : completion_logprobs(lps, state->text_offset);
            json piece = r.chat ? json{{"content", text}} : json(text);
            state->text_offset += text.size();
            lps.clear();
            if (!sse_write(sink, chunk(*job, choice_delta(*job, std::move(piece), std::move(lp), nullptr), usage_null)))
              return false;
          }
          if (!done) {
            if (!sink.is_writable()) {  // the client went away: free its slot at the next step
              srv->backend_->scheduler->cancel(job->seq_id);
              return false;
            }
            return true;
          }
          if (!result->is_ok()) {
            sse_write(sink, ApiError{.status = 500, .message = result->status().message(), .type = "server_error"}.to_json());
          } else {
            const generate::SequenceStats& st = **result;
            t_log.completion_tokens = st.generated_tokens;
            t_log.ttft_s = st.first_token_seconds;
            t_log.snapshot_s = st.snapshot_seconds;
            json lp = nullptr;
            if (r.logprobs && !lps.empty()) lp = r.chat ? chat_logprobs(lps) : completion_logprobs(lps, state->text_offset);
            json empty = r.chat ? json::object() : json("");
            if (!sse_write(sink, chunk(*job, choice_delta(*job, std::move(empty), std::move(lp), finish_reason(st.stop)), usage_null)))
              return false;
            if (r.include_usage) {
              json u = chunk(*job, nullptr, false);
              u["choices"] = json::array();
              u["usage"] = usage(*job, st);
              if (!sse_write(sink, u)) return false;
            }
          }
          sse_done(sink);
          sink.done();
          return true;
        },
        [srv, job](bool) {
          std::lock_guard lock(job->mu);
          if (!job->done) srv->backend_->scheduler->cancel(job->seq_id);
        });
  }
};

Result<std::unique_ptr<Server>> Server::bind(const ServerOptions& o) {
  if (o.queue < 0) return usage_error("--queue {} must be >= 0", o.queue);
  if (o.timeout_s < 1) return usage_error("--timeout {} must be >= 1", o.timeout_s);
  if (o.max_body_bytes < 1) return usage_error("--max-body-bytes must be >= 1");
  auto s = std::unique_ptr<Server>(new Server());
  s->options_ = o;
  s->http_ = std::make_unique<httplib::Server>();
  const size_t threads = static_cast<size_t>(std::clamp(o.http_threads > 0 ? o.http_threads : 8 + o.queue, 2, 1024));
  s->http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s->routes();
  const int port = o.port == 0 ? s->http_->bind_to_any_port(o.host) : (s->http_->bind_to_port(o.host, o.port) ? o.port : -1);
  if (port <= 0) return resource_error("cannot listen on {}:{} (in use, or not an address of this machine)", o.host, o.port);
  s->port_ = port;
  return s;
}

Server::~Server() {
  if (http_) http_->stop();
  stop_loop();
}

void Server::set_backend(Backend backend) {
  backend_ = std::make_unique<Backend>(std::move(backend));
  capacity_ = backend_->scheduler->max_sequences() + options_.queue;
  loop_running_ = true;
  loop_ = std::thread([this] {
    while (loop_running_.load()) {
      if (!backend_->scheduler->step()) backend_->scheduler->wait_for_work(std::chrono::milliseconds(50));
    }
  });
  ready_ = true;
}

void Server::run() {
  run_active_ = true;  // then read stop_requested_; shutdown() writes them the other way round
  if (!stop_requested_.load()) http_->listen_after_bind();
  run_active_ = false;
  stop_loop();
}

void Server::stop_loop() {
  loop_running_ = false;
  if (loop_.joinable()) loop_.join();
}

void Server::cancel_all() {
  std::lock_guard lock(jobs_mu_);
  for (const auto& j : jobs_) {
    std::lock_guard jl(j->mu);
    if (j->seq_id) backend_->scheduler->cancel(j->seq_id);
  }
}

void Server::shutdown(std::chrono::milliseconds grace) {
  draining_ = true;
  const auto deadline = Clock::now() + grace;
  auto wait_until = [](auto pred, Clock::time_point until) {
    while (!pred() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  if (ready_) {
    wait_until([&] { return in_flight_.load() == 0; }, deadline);
    cancel_all();
    wait_until([&] { return in_flight_.load() == 0; }, Clock::now() + std::chrono::seconds(5));
    // Let the writers send what they hold (final chunks, [DONE]).
    wait_until([&] { return open_http_.load() == 0; }, Clock::now() + std::chrono::seconds(2));
  }
  // httplib's stop() does nothing until listening has begun: repeat it while run() is inside
  // listen (run() itself returns at once if it starts after stop_requested_ is set).
  // Only the first shutdown() stops the listener (httplib's stop() must run once).
  const bool first = !stop_requested_.exchange(true);
  bool stopped = !first;
  while (run_active_.load()) {
    if (!stopped && http_->is_running()) {
      http_->stop();
      stopped = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Server::routes() {
  httplib::Server& h = *http_;
  h.set_payload_max_length(options_.max_body_bytes);
  h.set_read_timeout(options_.timeout_s, 0);
  h.set_write_timeout(options_.timeout_s, 0);
  h.set_keep_alive_max_count(1000);
  // A body past --max-body-bytes is refused from its headers, before any of it is read
  // (httplib's own limit would first read and discard all of it); chunked request bodies,
  // whose size is unknown up front, are refused the same way.
  auto refuse_body = [this](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Transfer-Encoding") && req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos) {
      res.set_header("Connection", "close");
      send_error(res, {.status = 411, .message = "chunked request bodies are not accepted; send Content-Length",
                       .code = "length_required"});
      return true;
    }
    if (!req.has_header("Content-Length")) return false;
    const std::string v = req.get_header_value("Content-Length");
    errno = 0;
    char* end = nullptr;
    const unsigned long long len = std::strtoull(v.c_str(), &end, 10);
    if (errno == 0 && end != v.c_str() && *end == '\0' && len <= options_.max_body_bytes) return false;
    res.set_header("Connection", "close");
    send_error(res, {.status = 413,
                     .message = fmt::format("the request body of {} bytes is larger than {} bytes (--max-body-bytes)", v,
                                            options_.max_body_bytes),
                     .code = "request_too_large"});
    return true;
  };
  h.set_expect_100_continue_handler([refuse_body](const httplib::Request& req, httplib::Response& res) {
    return refuse_body(req, res) ? res.status : 100;
  });
  h.set_pre_routing_handler([this, refuse_body](const httplib::Request& req, httplib::Response& res) {
    t_log = RequestLog{.routed = true, .start = Clock::now()};
    open_http_.fetch_add(1);
    if (refuse_body(req, res)) return httplib::Server::HandlerResponse::Handled;
    if (!options_.api_key.empty() && req.path != "/health" && req.path != "/metrics") {
      const std::string auth = req.get_header_value("Authorization");
      const std::string kBearer = "Bearer ";
      const bool ok = auth.compare(0, kBearer.size(), kBearer) == 0 && constant_time_equal(auth.substr(kBearer.size()), options_.api_key);
      if (!ok) {
        send_error(res, {.status = 401, .message = "Incorrect API key provided (Authorization: Bearer KEY)",
                         .type = "authentication_error", .code = "invalid_api_key"});
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (req.path != "/health" && req.path != "/metrics" && (!ready_.load() || draining_.load())) {
      res.set_header("Retry-After", "1");
      send_error(res, {.status = 503, .message = ready_.load() ? "the server is shutting down" : "the model is loading",
                       .type = "server_error", .code = "unavailable"});
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  h.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    ApiError e{.status = res.status, .message = fmt::format("HTTP {}", res.status)};
    if (res.status == 404) {
      e.message = fmt::format("no route for {} {}", req.method, req.path);
      e.code = "not_found";
    } else if (res.status == 413) {
      e.message = fmt::format("the request body is larger than {} bytes (--max-body-bytes)", options_.max_body_bytes);
      e.code = "request_too_large";
    } else if (res.status >= 500) {
      e.type = "server_error";
    }
    send_error(res, e);
    return httplib::Server::HandlerResponse::Handled;
  }));
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, {.status = 500, .message = what, .type = "server_error"});
  });
  h.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    const RequestLog l = t_log;
    t_log = RequestLog{};
    if (l.routed) open_http_.fetch_sub(1);
    // Probes and scrapers are not logged unless they fail.
    if ((req.path == "/health" || req.path == "/metrics") && res.status == 200) return;
    std::string line = fmt::format("{} {} {}", req.method, req.path, res.status);
    if (l.prompt_tokens >= 0) line += fmt::format(" prompt_tokens={}", l.prompt_tokens);
    if (l.completion_tokens >= 0) line += fmt::format(" completion_tokens={}", l.completion_tokens);
    if (l.ttft_s >= 0) line += fmt::format(" ttft={:.1f}ms", l.ttft_s * 1e3);
    if (l.snapshot_s > 0) line += fmt::format(" snapshots={:.1f}ms", l.snapshot_s * 1e3);
    if (l.routed) line += fmt::format(" total={:.1f}ms", seconds_since(l.start) * 1e3);
    std::fprintf(stderr, "%s\n", line.c_str());
  });

  h.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (!ready_.load())
      return send_error(res, {.status = 503, .message = "the model is loading", .type = "server_error", .code = "unavailable"});
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  h.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Gauges g;
    if (ready_.load()) {
      g.queued = static_cast<double>(backend_->scheduler->queued());
      g.running = static_cast<double>(backend_->scheduler->running());
      g.kv_cache_usage = backend_->scheduler->cache_utilisation();
    }
    res.set_content(metrics_.render(g), "text/plain; version=0.0.4");
  });
  h.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json m = {{"id", backend_->model_name}, {"object", "model"}, {"created", unix_now()}, {"owned_by", "offgraph"},
              {"meta", {{"n_ctx", backend_->ctx_len}, {"n_vocab", backend_->scheduler->model().vocab_size()}}}};
    res.set_content(json{{"object", "list"}, {"data", json::array({m})}}.dump(), "application/json");
  });
  h.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    Handlers::completion(*this, req, res, true);
  });
  h.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    Handlers::completion(*this, req, res, false);
  });
  h.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    TokenizeRequest t;
    if (auto e = parse_tokenize(req.body, t)) return send_error(res, *e);
    auto ids = backend_->text.tokenizer.encode(t.content, t.add_special);
    if (!ids.is_ok()) return send_error(res, invalid_request(ids.status().message(), "content"));
    res.set_content(json{{"tokens", *ids}}.dump(), "application/json");
  });
  h.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    std::vector<int32_t> ids;
    if (auto e = parse_detokenize(req.body, ids)) return send_error(res, *e);
    const std::string text = backend_->text.tokenizer.decode(ids, false);
    res.set_content(json{{"content", text}}.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  });
}

}  // namespace og::serve
