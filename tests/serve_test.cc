// `offgraph serve` over HTTP with cpp-httplib's client (and raw sockets for what clients
// would not send), on a generated Llama-shaped program carrying the real Llama-3 tokenizer
// and chat template. Greedy answers are compared with the same request run alone through
// generate(); errors with the OpenAI error object's status, type, param and code; every
// test ends with nothing running and the scheduler gauges at 0.
#include <gtest/gtest.h>

#include <sstream>
#include <httplib.h>

#include <filesystem>
#include <future>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "e2e_support.h"
#include "generate/generator.h"
#include "generate/model_text.h"
#include "serve_support.h"

namespace og {
namespace {

using namespace og::testing;
using json = nlohmann::json;

const char* kKey = "sekret-key-1234";

class ServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gen_ = generate_with_real_tokenizer(51).release();
    program_ = new std::string(export_to(*gen_, "p.ogp", "fp32", 16, 4096));
    server_ = new ServerProcess("-m " + *program_ + " --parallel 4 --threads 1 --ctx-size 256 --api-key " + kKey +
                                " --max-body-bytes 65536 --alias tiny");
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(), 0) << server_->log();
    delete server_;
    delete program_;
    delete gen_;
  }
  void SetUp() override { ASSERT_GT(server_->port(), 0) << server_->log(); }

  static httplib::Client client(int port, bool auth = true) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    c.set_connection_timeout(10, 0);
    if (auth) c.set_default_headers({{"Authorization", std::string("Bearer ") + kKey}});
    return c;
  }
  static httplib::Result post(const std::string& path, const std::string& body, bool auth = true) {
    auto c = client(server_->port(), auth);
    return c.Post(path.c_str(), body, "application/json");
  }
  static double metric(int port, const std::string& name) {
    auto c = client(port);
    auto r = c.Get("/metrics");
    if (!r || r->status != 200) return -1;
    std::smatch m;
    if (!std::regex_search(r->body, m, std::regex("\n" + name + " ([0-9.e+-]+)\n"))) return -1;
    return std::stod(m[1]);
  }
  // Waits (bounded) until nothing runs or waits and no cache position is in use.
  static bool drained(int port, std::chrono::milliseconds bound = std::chrono::milliseconds(3000)) {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < until) {
      if (metric(port, "offgraph:num_requests_running") == 0 && metric(port, "offgraph:num_requests_waiting") == 0 &&
          metric(port, "offgraph:kv_cache_usage_perc") == 0)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // The same request run alone through generate(): greedy tokens and their text.
  struct Alone {
    std::vector<int32_t> prompt, tokens;
    std::string text;
    generate::StopReason stop;
  };
  static Alone alone(const std::vector<int32_t>& prompt, int32_t max_tokens, StorageType kv = StorageType::kF32) {
    auto model = runtime::Model::load(*program_);
    EXPECT_TRUE(model.is_ok());
    auto text = generate::load_model_text(**model, "");
    EXPECT_TRUE(text.is_ok());
    auto session = runtime::Session::create(*model, {.kv_dtype = kv, .max_ctx_len = 256});
    Alone a{.prompt = prompt};
    auto st = generate::generate(**session, prompt, {.max_tokens = max_tokens, .sampling = {.temperature = 0}, .stop_ids = text->stop_ids},
                                 [&](int32_t t) {
                                   a.tokens.push_back(t);
                                   return true;
                                 });
    EXPECT_TRUE(st.is_ok());
    a.stop = st->stop;
    a.text = text->tokenizer.decode(a.tokens, true);
    return a;
  }
  static std::vector<int32_t> chat_prompt(const std::string& user) {
    auto model = runtime::Model::load(*program_);
    auto text = generate::load_model_text(**model, "");
    chat::RenderOptions o = text->render;
    o.add_generation_prompt = true;
    auto rendered = text->chat_template->render({{"user", user}}, o);
    EXPECT_TRUE(rendered.is_ok());
    return *text->tokenizer.encode(*rendered, false);
  }

  static Generated* gen_;
  static std::string* program_;
  static ServerProcess* server_;
};
Generated* ServeTest::gen_ = nullptr;
std::string* ServeTest::program_ = nullptr;
ServerProcess* ServeTest::server_ = nullptr;

// The OpenAI error object: {"error": {"message", "type", "param", "code"}} with the status.
void expect_error(const httplib::Result& r, int status, const std::string& type, const json& param, const json& code) {
  ASSERT_TRUE(r) << "no response";
  EXPECT_EQ(r->status, status) << r->body;
  auto j = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("error")) << r->body;
  const json& e = j["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty()) << r->body;
  EXPECT_EQ(e["type"], type) << r->body;
  EXPECT_EQ(e["param"], param) << r->body;
  EXPECT_EQ(e["code"], code) << r->body;
}

TEST_F(ServeTest, BadRequestsGetTheOpenAIErrorObject) {
  const std::string chat = "/v1/chat/completions";
  const json msgs = json::array({{{"role", "user"}, {"content", "hi"}}});
  expect_error(post(chat, "{\"messages\": [ {\"role\""), 400, "invalid_request_error", nullptr, nullptr);
  expect_error(post(chat, "[1, 2]"), 400, "invalid_request_error", nullptr, nullptr);
  expect_error(post(chat, json{{"messages", "hi"}}.dump()), 400, "invalid_request_error", "messages", nullptr);
  expect_error(post(chat, json{{"messages", {{{"role", "wizard"}, {"content", "x"}}}}}.dump()), 400, "invalid_request_error",
               "messages[0].role", nullptr);
  expect_error(post(chat, json{{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}}.dump()), 400,
               "invalid_request_error", "messages[0].content", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"temperature", "hot"}}.dump()), 400, "invalid_request_error", "temperature", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"temperature", 2.5}}.dump()), 400, "invalid_request_error", "temperature", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"max_tokens", -3}}.dump()), 400, "invalid_request_error", "max_tokens", nullptr);
  // max_tokens below 1 is refused, as OpenAI and vLLM do (docs/serving.md): -1 and 0 too.
  expect_error(post(chat, json{{"messages", msgs}, {"max_tokens", -1}}.dump()), 400, "invalid_request_error", "max_tokens", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"max_tokens", 0}}.dump()), 400, "invalid_request_error", "max_tokens", nullptr);
  expect_error(post("/v1/completions", json{{"prompt", "x"}, {"max_tokens", 0}}.dump()), 400, "invalid_request_error",
               "max_tokens", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"max_completion_tokens", 0}}.dump()), 400, "invalid_request_error",
               "max_completion_tokens", nullptr);
  // Every range check names its field.
  expect_error(post(chat, json{{"messages", msgs}, {"temperature", -0.5}}.dump()), 400, "invalid_request_error", "temperature", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"top_p", 1.5}}.dump()), 400, "invalid_request_error", "top_p", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"top_logprobs", 21}, {"logprobs", true}}.dump()), 400, "invalid_request_error",
               "top_logprobs", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"stop", {1, 2}}}.dump()), 400, "invalid_request_error", "stop", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"presence_penalty", 3}}.dump()), 400, "invalid_request_error", "presence_penalty", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"n", 0}}.dump()), 400, "invalid_request_error", "n", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"tools", {{{"type", "function"}, {"function", {{"description", "f"}}}}}}}.dump()),
               400, "invalid_request_error", "tools[0].function.name", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"tools", {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", 3}}}}}}}
                              .dump()),
               400, "invalid_request_error", "tools[0].function.parameters", nullptr);
  expect_error(post(chat, json{{"messages", msgs},
                               {"tools", {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", {{"not", json::object()}}}}}}}}}
                              .dump()),
               400, "invalid_request_error", "tools[0].function.parameters", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}},
                               {"tool_choice", {{"type", "function"}, {"function", {{"name", "g"}}}}}}
                              .dump()),
               400, "invalid_request_error", "tool_choice", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"tool_choice", "required"}}.dump()), 400, "invalid_request_error", "tool_choice",
               nullptr);
  expect_error(post(chat, json{{"messages", {{{"role", "user"}, {"content", "x"}}, {{"role", "assistant"}, {"tool_calls", 5}}}}}.dump()),
               400, "invalid_request_error", "messages[1].tool_calls", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"response_format", {{"type", "json_schema"}, {"json_schema", 3}}}}.dump()),
               400, "invalid_request_error", "response_format.json_schema", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"response_format", {{"type", "xml"}}}}.dump()), 400, "invalid_request_error",
               "response_format.type", nullptr);
  expect_error(post(chat, json{{"messages", msgs},
                               {"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", {{"not", json::object()}}}}}}}}
                              .dump()),
               400, "invalid_request_error", "response_format.json_schema.schema", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", false}}}}}}
                              .dump()),
               400, "invalid_request_error", "response_format.json_schema.schema", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"logit_bias", {{"abc", 1}}}}.dump()), 400, "invalid_request_error", "logit_bias", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"logit_bias", {{"5", 101}}}}.dump()), 400, "invalid_request_error", "logit_bias", nullptr);
  expect_error(post(chat, json{{"messages", msgs}, {"stream_options", {{"include_usage", "yes"}}}}.dump()), 400,
               "invalid_request_error", "stream_options", nullptr);
  // Past the context (256): a 300-token prompt, and a prompt plus max_tokens.
  std::vector<int32_t> long_prompt(300, 1000);
  expect_error(post("/v1/completions", json{{"prompt", long_prompt}}.dump()), 400, "invalid_request_error", "prompt",
               "context_length_exceeded");
  expect_error(post("/v1/completions", json{{"prompt", {1, 2, 3}}, {"max_tokens", 254}}.dump()), 400, "invalid_request_error",
               "max_tokens", "context_length_exceeded");
  expect_error(post("/v1/completions", json{{"prompt", {1, 128256}}}.dump()), 400, "invalid_request_error", "prompt", nullptr);
  // One bad prompt among several: a negative id.
  expect_error(post("/v1/completions", json{{"prompt", json::array({json("a"), json::array({1, -2})})}}.dump()), 400,
               "invalid_request_error", "prompt", nullptr);
  expect_error(post("/tokenize", json{{"content", 5}}.dump()), 400, "invalid_request_error", "content", nullptr);
  expect_error(post("/detokenize", json{{"tokens", {-1}}}.dump()), 400, "invalid_request_error", "tokens", nullptr);
  // Unknown model and path.
  expect_error(post(chat, json{{"messages", msgs}, {"model", "nope"}}.dump()), 404, "invalid_request_error", "model", "model_not_found");
  expect_error(post("/v1/nothing", "{}"), 404, "invalid_request_error", nullptr, "not_found");
  // Bad or missing key: 401 (/health and /metrics need none).
  expect_error(post(chat, json{{"messages", msgs}}.dump(), /*auth=*/false), 401, "authentication_error", nullptr, "invalid_api_key");
  {
    auto c = client(server_->port(), false);
    c.set_default_headers({{"Authorization", "Bearer sekret-key-1235"}});
    expect_error(c.Post(chat.c_str(), json{{"messages", msgs}}.dump(), "application/json"), 401, "authentication_error", nullptr,
                 "invalid_api_key");
    EXPECT_EQ(c.Get("/health")->status, 200);
  }
  // A body past --max-body-bytes: 413.
  expect_error(post(chat, json{{"messages", {{{"role", "user"}, {"content", std::string(70000, 'a')}}}}}.dump()), 413,
               "invalid_request_error", nullptr, "request_too_large");
  EXPECT_TRUE(drained(server_->port()));
  // The server still answers.
  auto ok = post(chat, json{{"messages", msgs}, {"max_tokens", 2}}.dump());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

// Both limits given: max_completion_tokens (what the openai client sends for newer models)
// wins over the deprecated max_tokens, as OpenAI documents.
// /v1/completions' echo: the reply's text is the prompt's followed by the completion, whole or
// streamed (the prompt first), for text and token-id prompts; the completion itself is the
// greedy one without echo. echo with logprobs and a non-empty suffix are refused by name.
TEST_F(ServeTest, EchoLeadsWithThePromptAndSuffixIsRefused) {
  const std::string prompt = "The quick brown fox";
  auto plain = post("/v1/completions", json{{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}}.dump());
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  const std::string completion = json::parse(plain->body)["choices"][0]["text"];
  auto echoed = post("/v1/completions", json{{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}, {"echo", true}}.dump());
  ASSERT_TRUE(echoed);
  ASSERT_EQ(echoed->status, 200) << echoed->body;
  json e = json::parse(echoed->body);
  EXPECT_EQ(e["choices"][0]["text"], prompt + completion);
  EXPECT_EQ(e["usage"]["completion_tokens"], json::parse(plain->body)["usage"]["completion_tokens"]);

  // Token ids: the echo is their text (the tokenizer's decode), streamed first.
  auto ids = post("/tokenize", json{{"content", prompt}}.dump());
  ASSERT_TRUE(ids);
  const json tokens = json::parse(ids->body)["tokens"];
  auto by_ids = post("/v1/completions", json{{"prompt", tokens}, {"max_tokens", 4}, {"temperature", 0}}.dump());
  ASSERT_TRUE(by_ids);
  const std::string ids_completion = json::parse(by_ids->body)["choices"][0]["text"];
  auto streamed = post("/v1/completions", json{{"prompt", tokens}, {"max_tokens", 4}, {"temperature", 0}, {"echo", true},
                                               {"stream", true}}.dump());
  ASSERT_TRUE(streamed);
  std::string text, first;
  std::istringstream lines(streamed->body);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("data: {")) continue;
    const std::string piece = json::parse(line.substr(6))["choices"][0]["text"];
    if (first.empty()) first = piece;
    text += piece;
  }
  EXPECT_TRUE(first.starts_with(prompt)) << first;
  EXPECT_EQ(text, prompt + ids_completion);

  expect_error(post("/v1/completions", json{{"prompt", prompt}, {"suffix", " jumps"}}.dump()), 400,
               "invalid_request_error", "suffix", nullptr);
  expect_error(post("/v1/completions", json{{"prompt", prompt}, {"echo", "yes"}}.dump()), 400, "invalid_request_error",
               "echo", nullptr);
  auto empty_suffix = post("/v1/completions", json{{"prompt", prompt}, {"suffix", ""}, {"max_tokens", 1}}.dump());
  ASSERT_TRUE(empty_suffix);
  EXPECT_EQ(empty_suffix->status, 200) << empty_suffix->body;
}

// CORS: a browser's preflight is answered without the API key (204, no body, the methods and
// the headers it asked for); every answer, errors and streams included, lets any origin read it.
TEST_F(ServeTest, BrowsersPreflightAndReadAnswersFromAnyOrigin) {
  auto anonymous = client(server_->port(), /*auth=*/false);
  auto pre = anonymous.Options("/v1/chat/completions", {{"Origin", "http://localhost:3000"},
                                                        {"Access-Control-Request-Method", "POST"},
                                                        {"Access-Control-Request-Headers", "authorization, content-type, x-stainless-os"}});
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);
  EXPECT_TRUE(pre->body.empty());
  EXPECT_FALSE(pre->has_header("Content-Length"));
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_NE(pre->get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  EXPECT_EQ(pre->get_header_value("Access-Control-Allow-Headers"), "authorization, content-type, x-stainless-os");
  // An OPTIONS that is not a preflight is an ordinary request: the key is still required.
  expect_error(anonymous.Options("/v1/models"), 401, "authentication_error", nullptr, "invalid_api_key");
  auto refused = anonymous.Get("/v1/models", {{"Origin", "http://localhost:3000"}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("Access-Control-Allow-Origin"), "*");
  auto c = client(server_->port());
  auto streamed = c.Post("/v1/completions", {{"Origin", "http://localhost:3000"}},
                         json{{"prompt", "Hi"}, {"max_tokens", 2}, {"stream", true}}.dump(), "application/json");
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->get_header_value("Access-Control-Allow-Origin"), "*");
}

// n choices, and several prompts on /v1/completions: choice k is what a request of its own
// prompt with seed + k gives (sampled at temperature 1), whole or streamed (each chunk names
// its index; the streamed pieces of a choice add up to its whole text); usage counts each
// prompt once and every choice's completion.
TEST_F(ServeTest, ChoicesAreTheRequestsOfTheirOwnSeedAndPrompt) {
  const json messages = {{{"role", "user"}, {"content", "Tell me a story"}}};
  auto alone = [&](const json& body) {
    auto r = post(body.contains("messages") ? "/v1/chat/completions" : "/v1/completions", body.dump());
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "");
    return json::parse(r->body);
  };
  const json many = alone({{"messages", messages}, {"n", 3}, {"seed", 40}, {"max_tokens", 6}, {"temperature", 1}});
  ASSERT_EQ(many["choices"].size(), 3u) << many;
  int64_t completion = 0;
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(many["choices"][k]["index"], k);
    const json one = alone({{"messages", messages}, {"seed", 40 + k}, {"max_tokens", 6}, {"temperature", 1}});
    EXPECT_EQ(many["choices"][k]["message"], one["choices"][0]["message"]) << k;
    completion += one["usage"]["completion_tokens"].get<int64_t>();
    EXPECT_EQ(many["usage"]["prompt_tokens"], one["usage"]["prompt_tokens"]);
  }
  EXPECT_EQ(many["usage"]["completion_tokens"], completion);
  EXPECT_EQ(many["usage"]["total_tokens"], completion + many["usage"]["prompt_tokens"].get<int64_t>());
  // Streamed: the same texts, by index, and one usage chunk for all.
  auto s = post("/v1/chat/completions", json{{"messages", messages}, {"n", 3}, {"seed", 40}, {"max_tokens", 6}, {"temperature", 1},
                                             {"stream", true}, {"stream_options", {{"include_usage", true}}}}.dump());
  ASSERT_TRUE(s && s->status == 200);
  std::vector<std::string> texts(3);
  std::vector<int> finishes(3, 0);
  json usage;
  std::istringstream lines(s->body);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("data: {")) continue;
    const json c = json::parse(line.substr(6));
    if (c["usage"].is_object()) usage = c["usage"];
    for (const json& ch : c["choices"]) {
      const int k = ch["index"];
      ASSERT_TRUE(k >= 0 && k < 3) << line;
      if (ch["delta"].contains("content")) texts[k] += ch["delta"]["content"].get<std::string>();
      if (ch["finish_reason"].is_string()) ++finishes[k];
    }
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(texts[k], many["choices"][k]["message"]["content"]) << k;
    EXPECT_EQ(finishes[k], 1) << k;
  }
  EXPECT_EQ(usage["completion_tokens"], many["usage"]["completion_tokens"]) << s->body;

  // Two prompts (text and ids) times n = 2: prompt-major order, each prompt counted once.
  const json tokens = json::parse(post("/tokenize", json{{"content", "Once"}}.dump())->body)["tokens"];
  const json prompts = {"The sea", tokens};
  const json both = alone({{"prompt", prompts}, {"n", 2}, {"seed", 7}, {"max_tokens", 4}, {"temperature", 1}});
  ASSERT_EQ(both["choices"].size(), 4u) << both;
  int64_t prompt_tokens = 0;
  for (int k = 0; k < 4; ++k) {
    const json one = alone({{"prompt", prompts[k / 2]}, {"seed", 7 + k}, {"max_tokens", 4}, {"temperature", 1}});
    EXPECT_EQ(both["choices"][k]["text"], one["choices"][0]["text"]) << k;
    EXPECT_EQ(both["choices"][k]["index"], k);
    if (k % 2 == 0) prompt_tokens += one["usage"]["prompt_tokens"].get<int64_t>();
  }
  EXPECT_EQ(both["usage"]["prompt_tokens"], prompt_tokens);

  expect_error(post("/v1/chat/completions", json{{"messages", messages}, {"n", 129}}.dump()), 400, "invalid_request_error", "n", nullptr);
  expect_error(post("/v1/completions", json{{"prompt", json::array({"a", "b"})}, {"n", 100}}.dump()), 400,
               "invalid_request_error", "n", nullptr);
  expect_error(post("/v1/completions", json{{"prompt", "a"}, {"n", 2}, {"best_of", 3}}.dump()), 400, "invalid_request_error",
               "best_of", nullptr);
  expect_error(post("/v1/completions", json{{"prompt", json::array({"a", 5})}}.dump()), 400, "invalid_request_error", "prompt",
               nullptr);
  EXPECT_TRUE(drained(server_->port()));
}

// vLLM's end controls, with logit_bias making the end the likeliest token: ignore_eos lets the
// reply run to max_tokens, min_tokens holds the end back for that many tokens, and
// stop_token_ids end the reply at an id of the request's choosing (not emitted).
TEST_F(ServeTest, IgnoreEosMinTokensAndStopTokenIds) {
  auto model = runtime::Model::load(*program_);
  ASSERT_TRUE(model.is_ok());
  auto text = generate::load_model_text(**model, "");
  ASSERT_TRUE(text.is_ok());
  ASSERT_FALSE(text->stop_ids.empty());
  const std::string eos = std::to_string(text->stop_ids.front());
  auto run = [&](json body) {
    body["prompt"] = "Hello";
    body["max_tokens"] = 6;
    auto r = post("/v1/completions", body.dump());
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "");
    const json j = json::parse(r->body);
    return std::pair{j["choices"][0]["finish_reason"].get<std::string>(), j["usage"]["completion_tokens"].get<int>()};
  };
  EXPECT_EQ(run({{"logit_bias", {{eos, 100}}}}), std::pair(std::string("stop"), 0));
  EXPECT_EQ(run({{"logit_bias", {{eos, 100}}}, {"ignore_eos", true}}), std::pair(std::string("length"), 6));
  EXPECT_EQ(run({{"logit_bias", {{eos, 100}}}, {"min_tokens", 3}}), std::pair(std::string("stop"), 3));
  EXPECT_EQ(run({{"logit_bias", {{"1000", 100}}}}), std::pair(std::string("length"), 6));
  EXPECT_EQ(run({{"logit_bias", {{"1000", 100}}}, {"stop_token_ids", {1000}}}), std::pair(std::string("stop"), 0));
  EXPECT_EQ(run({{"logit_bias", {{"1000", 100}}}, {"stop_token_ids", {1000}}, {"min_tokens", 2}}), std::pair(std::string("stop"), 2));
  expect_error(post("/v1/completions", json{{"prompt", "a"}, {"max_tokens", 2}, {"min_tokens", 3}}.dump()), 400,
               "invalid_request_error", "min_tokens", nullptr);
  expect_error(post("/v1/completions", json{{"prompt", "a"}, {"stop_token_ids", {-1}}}.dump()), 400, "invalid_request_error",
               "stop_token_ids", nullptr);
}

// echo with logprobs (lm-evaluation-harness's loglikelihood request): each prompt token's
// logprob is log_softmax of the logits at the position before it, as the program computes them
// alone (all rows of one prefill, here), the first token's null; the generated tokens follow.
// A second identical request (its prefix cached) gives the same numbers: prompt logprobs are
// always computed, never restored. Streamed, the prompt's text and logprobs come first.
TEST_F(ServeTest, EchoedPromptLogprobsAreThoseOfThePrefill) {
  const std::string prompt = "The quick brown fox jumps over the lazy dog";
  const json body = {{"prompt", prompt}, {"echo", true}, {"logprobs", 2}, {"max_tokens", 2}, {"temperature", 0}};
  auto first = post("/v1/completions", body.dump());
  ASSERT_TRUE(first && first->status == 200) << (first ? first->body : "");
  const json c = json::parse(first->body)["choices"][0];
  const json& lp = c["logprobs"];
  auto ids = post("/tokenize", json{{"content", prompt}, {"add_special", true}}.dump());
  const std::vector<int32_t> tokens = json::parse(ids->body)["tokens"];
  ASSERT_EQ(lp["tokens"].size(), tokens.size() + 2) << lp;
  EXPECT_TRUE(lp["token_logprobs"][0].is_null());
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  EXPECT_TRUE(c["text"].get<std::string>().starts_with(prompt));
  // The program alone: every row of the prompt's prefill.
  auto model = runtime::Model::load(*program_);
  ASSERT_TRUE(model.is_ok());
  auto session = runtime::Session::create(*model, {.max_ctx_len = 256});
  ASSERT_TRUE(session.is_ok());
  auto rows = (*session)->append(tokens, runtime::LogitsRows::kAll);
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  const size_t V = static_cast<size_t>((*model)->vocab_size());
  for (size_t t = 1; t < tokens.size(); ++t) {
    const std::span<const float> row = rows->subspan((t - 1) * V, V);
    const float mx = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (float x : row) sum += std::exp(static_cast<double>(x) - mx);
    const double want = row[static_cast<size_t>(tokens[t])] - mx - std::log(sum);
    EXPECT_NEAR(lp["token_logprobs"][t].get<double>(), want, 1e-4) << t;
    ASSERT_TRUE(lp["top_logprobs"][t].is_object() && lp["top_logprobs"][t].size() == 2) << lp["top_logprobs"][t];
    double best = -1e30;
    for (const auto& [tok, l] : lp["top_logprobs"][t].items()) best = std::max(best, l.get<double>());
    EXPECT_NEAR(best, *std::max_element(row.begin(), row.end()) - mx - std::log(sum), 1e-4) << t;
  }
  auto again = post("/v1/completions", body.dump());
  ASSERT_TRUE(again && again->status == 200);
  EXPECT_EQ(json::parse(again->body)["choices"][0]["logprobs"], lp);
  json streamed_body = body;
  streamed_body["stream"] = true;
  auto s = post("/v1/completions", streamed_body.dump());
  ASSERT_TRUE(s && s->status == 200);
  std::istringstream lines(s->body);
  json first_chunk;
  for (std::string line; std::getline(lines, line) && first_chunk.is_null();)
    if (line.starts_with("data: {")) first_chunk = json::parse(line.substr(6))["choices"][0];
  ASSERT_TRUE(first_chunk["text"].get<std::string>().starts_with(prompt)) << first_chunk;
  ASSERT_GE(first_chunk["logprobs"]["tokens"].size(), tokens.size()) << first_chunk;
  EXPECT_TRUE(first_chunk["logprobs"]["token_logprobs"][0].is_null());
  // max_tokens 0 (allowed with echo only): the prompt and its logprobs, nothing generated.
  json scored = body;
  scored["max_tokens"] = 0;
  auto only = post("/v1/completions", scored.dump());
  ASSERT_TRUE(only && only->status == 200) << (only ? only->body : "");
  const json o = json::parse(only->body);
  EXPECT_EQ(o["choices"][0]["text"], prompt);
  EXPECT_EQ(o["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(o["usage"]["completion_tokens"], 0);
  ASSERT_EQ(o["choices"][0]["logprobs"]["token_logprobs"].size(), tokens.size());
  for (size_t t = 1; t < tokens.size(); ++t)
    EXPECT_EQ(o["choices"][0]["logprobs"]["token_logprobs"][t], lp["token_logprobs"][t]) << t;
  expect_error(post("/v1/completions", json{{"prompt", prompt}, {"max_tokens", 0}}.dump()), 400, "invalid_request_error",
               "max_tokens", nullptr);
}

TEST_F(ServeTest, MaxCompletionTokensWinsOverMaxTokens) {
  for (const char* path : {"/v1/chat/completions", "/v1/completions"}) {
    json body = {{"max_tokens", 40}, {"max_completion_tokens", 2}, {"temperature", 0}};
    if (std::string(path) == "/v1/completions") body["prompt"] = {1, 2, 3};
    else body["messages"] = json::array({{{"role", "user"}, {"content", "count"}}});
    auto r = post(path, body.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const json j = json::parse(r->body);
    const int64_t n = j["usage"]["completion_tokens"];
    EXPECT_LE(n, 2) << r->body;
    if (j["choices"][0]["finish_reason"] == "length") EXPECT_EQ(n, 2) << r->body;
  }
}

// The transport under the API: a chunked body reaches the endpoint decoded; two requests
// written at once on one connection are both answered, in order; a chunked body past
// --max-body-bytes once decoded gets 413 and a malformed chunk stream 400, both as OpenAI
// error objects, and the connection closes.
TEST_F(ServeTest, ChunkedBodiesAndPipelinedRequests) {
  const std::string auth = std::string("Authorization: Bearer ") + kKey + "\r\n";
  auto post_head = [&](const std::string& extra) {
    return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + auth + extra + "\r\n";
  };
  auto chunked = [](const std::string& body, size_t piece) {
    std::string out;
    for (size_t at = 0; at < body.size(); at += piece) {
      const std::string p = body.substr(at, piece);
      out += fmt::format("{:x}\r\n{}\r\n", p.size(), p);
    }
    return out + "0\r\n\r\n";
  };
  auto body_of = [](const std::string& response) {
    const size_t at = response.find("\r\n\r\n");
    return at == std::string::npos ? std::string() : response.substr(at + 4);
  };
  {
    RawConnection c(server_->port());
    const std::string body = json{{"prompt", {1, 2, 3, 4}}, {"max_tokens", 2}, {"temperature", 0}}.dump();
    ASSERT_TRUE(c.send(post_head("Transfer-Encoding: chunked\r\n") + chunked(body, 7)));
    const std::string r = c.read_until("\"prompt_tokens\":4");
    ASSERT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
    EXPECT_NE(r.find("\"prompt_tokens\":4"), std::string::npos) << r;
  }
  {
    // Two requests in one write: prompts of 3 and 5 tokens, answered in that order.
    RawConnection c(server_->port());
    std::string both;
    for (int n : {3, 5}) {
      const std::string body = json{{"prompt", std::vector<int32_t>(static_cast<size_t>(n), 1000)}, {"max_tokens", 1}}.dump();
      both += post_head("Content-Length: " + std::to_string(body.size()) + "\r\n") + body;
    }
    ASSERT_TRUE(c.send(both));
    const std::string r = c.read_until("\"prompt_tokens\":5");
    const size_t first = r.find("\"prompt_tokens\":3"), second = r.find("\"prompt_tokens\":5");
    ASSERT_NE(first, std::string::npos) << r;
    ASSERT_NE(second, std::string::npos) << r;
    EXPECT_LT(first, second);
    EXPECT_EQ(c.count("HTTP/1.1 200"), 2u) << r;
  }
  {
    RawConnection c(server_->port());  // 70,000 bytes in 1,000-byte chunks: over the 65,536 limit once decoded
    ASSERT_TRUE(c.send(post_head("Transfer-Encoding: chunked\r\n")));
    const std::string big = json{{"prompt", std::string(70000, 'a')}}.dump();
    c.send(chunked(big, 1000));
    EXPECT_TRUE(c.wait_closed(std::chrono::milliseconds(5000)));
    EXPECT_EQ(c.received().rfind("HTTP/1.1 413", 0), 0u) << c.received().substr(0, 300);
    const json e = json::parse(body_of(c.received()), nullptr, false);
    EXPECT_EQ(e["error"]["code"], "request_too_large") << c.received();
  }
  {
    RawConnection c(server_->port());
    ASSERT_TRUE(c.send(post_head("Transfer-Encoding: chunked\r\n") + "nothex\r\n{}\r\n0\r\n\r\n"));
    EXPECT_TRUE(c.wait_closed(std::chrono::milliseconds(5000)));
    EXPECT_EQ(c.received().rfind("HTTP/1.1 400", 0), 0u) << c.received();
    const json e = json::parse(body_of(c.received()), nullptr, false);
    EXPECT_EQ(e["error"]["type"], "invalid_request_error") << c.received();
  }
  EXPECT_TRUE(drained(server_->port()));
}

TEST_F(ServeTest, HugeDeclaredBodyIsRefusedBeforeItIsSent) {
  RawConnection c(server_->port());
  ASSERT_TRUE(c.ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.send(std::string("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kKey +
                     "\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{\"messages\":"));
  const std::string reply = c.read_until("}}");  // the server answers without waiting for the body
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(reply.rfind("HTTP/1.1 413", 0), 0u) << reply;
  EXPECT_NE(reply.find("request_too_large"), std::string::npos) << reply;
  EXPECT_LT(secs, 2.0);
}

TEST_F(ServeTest, ModelsHealthTokenizeDetokenize) {
  auto c = client(server_->port());
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  auto m = json::parse(models->body);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], "tiny");
  EXPECT_EQ(m["data"][0]["object"], "model");
  EXPECT_EQ(m["data"][0]["meta"]["kv_dtype"], "fp32");
  // OpenAI's retrieve: the same object by id; another id (percent-encoded as clients send
  // "org/name") is model_not_found, and only GET is allowed.
  auto one = c.Get("/v1/models/tiny");
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  json o = json::parse(one->body);
  EXPECT_EQ(o["id"], "tiny");
  EXPECT_EQ(o["meta"], m["data"][0]["meta"]);
  EXPECT_EQ(o["max_model_len"], 256);  // --ctx-size
  EXPECT_EQ(o["meta"]["n_ctx"], 256);
  expect_error(c.Get("/v1/models/org%2Ftiny"), 404, "invalid_request_error", "model", "model_not_found");
  EXPECT_NE(c.Get("/v1/models/org%2Ftiny")->body.find("'org/tiny'"), std::string::npos);
  expect_error(c.Delete("/v1/models/tiny"), 405, "invalid_request_error", nullptr, "method_not_allowed");
  auto health = c.Get("/health");
  EXPECT_EQ(health->status, 200);
  // /tokenize gives HuggingFace tokenizers' ids (the oracle file scripts/tokenizer_oracle.mjs
  // wrote from the real Llama-3 tokenizer.json) for every string of the corpus, over one
  // keep-alive connection.
  const json oracle = json::parse(read_file(std::string(OG_TEST_DATA) + "/tokenizer/expected_llama3.json"));
  ASSERT_GT(oracle["cases"].size(), 100u);
  size_t checked = 0;
  for (const json& c : oracle["cases"]) {
    auto tok = post("/tokenize", json{{"content", c["text"]}}.dump());
    ASSERT_TRUE(tok);
    ASSERT_EQ(tok->status, 200) << tok->body;
    EXPECT_EQ(json::parse(tok->body)["tokens"], c["ids"]) << c["text"];
    ++checked;
  }
  ASSERT_EQ(checked, oracle["cases"].size());
  // /detokenize of the oracle's ids of a mixed-script string gives the string back.
  for (const json& c : oracle["cases"]) {
    if (c["text"] != "Mixed: Hello, 世界! Привет 🌍 123 — ok?") continue;
    auto detok = post("/detokenize", json{{"tokens", c["ids"]}}.dump());
    ASSERT_TRUE(detok);
    EXPECT_EQ(json::parse(detok->body)["content"], c["text"]);
    ++checked;
  }
  EXPECT_EQ(checked, oracle["cases"].size() + 1);
}

// 8 clients x 4 greedy requests at once on 4 slots: each answer equals the same request run
// alone through generate(); afterwards nothing runs and no cache position is in use.
TEST_F(ServeTest, ConcurrentGreedyAnswersEqualEachRequestRunAlone) {
  struct Case {
    bool chat;
    std::string user;
    std::vector<int32_t> prompt;
    int32_t max_tokens;
  };
  std::vector<std::vector<Case>> clients(8);
  for (int c = 0; c < 8; ++c)
    for (int r = 0; r < 4; ++r) {
      const bool chat = (c + r) % 2 == 0;
      const std::string user = "Tell me about number " + std::to_string(c * 4 + r);
      clients[c].push_back({.chat = chat,
                            .user = user,
                            .prompt = chat ? chat_prompt(user) : test_tokens(5 + c * 7 + r * 3, 128000, c * 4 + r),
                            .max_tokens = 6 + (c + r) % 9});
    }
  std::vector<std::future<std::vector<std::string>>> futures;
  for (int c = 0; c < 8; ++c)
    futures.push_back(std::async(std::launch::async, [&, c] {
      auto cli = client(server_->port());
      std::vector<std::string> failures;
      for (const Case& k : clients[c]) {
        json body = {{"max_tokens", k.max_tokens}, {"temperature", 0}};
        if (k.chat) body["messages"] = {{{"role", "user"}, {"content", k.user}}};
        else body["prompt"] = k.prompt;
        auto r = cli.Post(k.chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), "application/json");
        if (!r || r->status != 200) {
          failures.push_back("request failed: " + (r ? r->body : std::string("no response")));
          continue;
        }
        auto j = json::parse(r->body);
        const Alone a = alone(k.prompt, k.max_tokens);
        const std::string got = k.chat ? j["choices"][0]["message"]["content"] : j["choices"][0]["text"];
        if (got != a.text) failures.push_back("text '" + got + "' != alone '" + a.text + "'");
        if (j["usage"]["completion_tokens"] != a.tokens.size()) failures.push_back("completion_tokens " + j["usage"].dump());
        if (j["usage"]["prompt_tokens"] != k.prompt.size()) failures.push_back("prompt_tokens " + j["usage"].dump());
        if (j["usage"]["total_tokens"] != k.prompt.size() + a.tokens.size()) failures.push_back("total_tokens " + j["usage"].dump());
        // Earlier requests may have left a shared prefix in the prefix cache: never the whole prompt.
        const int64_t cached = j["usage"]["prompt_tokens_details"]["cached_tokens"];
        if (cached < 0 || cached >= static_cast<int64_t>(k.prompt.size())) failures.push_back("cached_tokens " + j["usage"].dump());
        const char* reason = a.stop == generate::StopReason::kStopToken ? "stop" : "length";
        if (j["choices"][0]["finish_reason"] != reason) failures.push_back("finish_reason " + j.dump());
      }
      return failures;
    }));
  for (auto& f : futures)
    for (const auto& failure : f.get()) ADD_FAILURE() << failure;
  EXPECT_TRUE(drained(server_->port()));
}

// A chat that resends its history: the second turn restores the first turn's prompt and
// reply from the prefix cache (cached_tokens), and still answers exactly as a cold run.
TEST_F(ServeTest, FollowUpTurnReusesTheCachedHistory) {
  const std::string user1 = "Here is a long question with many words so that the prompt spans several blocks of tokens: "
                            "what is the meaning of the numbers one two three four five six seven eight nine ten?";
  json messages = {{{"role", "user"}, {"content", user1}}};
  auto r1 = post("/v1/chat/completions", json{{"messages", messages}, {"max_tokens", 8}, {"temperature", 0}}.dump());
  ASSERT_TRUE(r1 && r1->status == 200) << (r1 ? r1->body : "");
  const auto j1 = json::parse(r1->body);
  const std::string reply = j1["choices"][0]["message"]["content"];
  const int64_t first_prompt = j1["usage"]["prompt_tokens"];
  messages.push_back({{"role", "assistant"}, {"content", reply}});
  messages.push_back({{"role", "user"}, {"content", "And then?"}});
  auto r2 = post("/v1/chat/completions", json{{"messages", messages}, {"max_tokens", 6}, {"temperature", 0}}.dump());
  ASSERT_TRUE(r2 && r2->status == 200) << (r2 ? r2->body : "");
  const auto j2 = json::parse(r2->body);
  // At least the first turn's prompt is restored (the reply too, where it re-renders the same).
  EXPECT_GE(j2["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), first_prompt) << j2["usage"].dump();
  EXPECT_LT(j2["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), j2["usage"]["prompt_tokens"].get<int64_t>());
  // The same answer as the second turn's prompt run alone.
  auto model = runtime::Model::load(*program_);
  auto text = generate::load_model_text(**model, "");
  chat::RenderOptions o = text->render;
  o.add_generation_prompt = true;
  std::vector<chat::Message> msgs;
  for (const auto& m : messages) msgs.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  auto rendered = text->chat_template->render(msgs, o);
  ASSERT_TRUE(rendered.is_ok());
  const Alone a = alone(*text->tokenizer.encode(*rendered, false), 6);
  EXPECT_EQ(j2["choices"][0]["message"]["content"], a.text);
  EXPECT_GT(metric(server_->port(), "offgraph:prefix_cache_hits_total"), 0);
}

// --kv-dtype q4_0: the server says so, and a prompt that restores a cached prefix (held in
// q4_0, the cache's own dtype) answers exactly as a q4_0 session run alone.
TEST_F(ServeTest, QuantizedKvServesAndRestoresPrefixesExactly) {
  ServerProcess q4("-m " + *program_ + " --parallel 1 --threads 1 --ctx-size 256 --kv-dtype q4_0");
  ASSERT_GT(q4.port(), 0) << q4.log();
  auto c = client(q4.port(), false);
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["meta"]["kv_dtype"], "q4_0");
  const std::vector<int32_t> shared = test_tokens(40, 128000, 8);
  std::vector<int32_t> second = shared;
  for (int32_t t : test_tokens(5, 128000, 9)) second.push_back(t);
  for (bool first : {true, false}) {
    const std::vector<int32_t>& prompt = first ? shared : second;
    ASSERT_TRUE(drained(q4.port()));  // the first answer's state is stored once its slot is free
    auto r = c.Post("/v1/completions", json{{"prompt", prompt}, {"max_tokens", 6}, {"temperature", 0}}.dump(),
                    "application/json");
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
    const auto j = json::parse(r->body);
    if (!first) EXPECT_GE(j["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(), 32);
    EXPECT_EQ(j["choices"][0]["text"], alone(prompt, 6, StorageType::kQ4_0).text);
  }
  EXPECT_NE(q4.log().find("kv q4_0"), std::string::npos) << q4.log();
  EXPECT_EQ(q4.stop(), 0) << q4.log();
}

TEST_F(ServeTest, StopStringsEndTheAnswerAndAreNotEmitted) {
  const std::vector<int32_t> prompt = test_tokens(9, 128000, 3);
  const Alone a = alone(prompt, 24);
  ASSERT_GE(a.text.size(), 12u);
  // A stop string that spans a token boundary, from the middle of the greedy answer.
  // (cut on character boundaries: a stop string is text)
  auto boundary = [&](size_t i) {
    while (i < a.text.size() && (static_cast<unsigned char>(a.text[i]) & 0xC0) == 0x80) ++i;
    return i;
  };
  const size_t from = boundary(a.text.size() / 2 - 2), to = boundary(from + 4);
  const std::string stop = a.text.substr(from, to - from);
  auto r = post("/v1/completions", json{{"prompt", prompt}, {"max_tokens", 24}, {"temperature", 0}, {"stop", {"\x01", stop}}}.dump());
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  auto j = json::parse(r->body);
  EXPECT_EQ(j["choices"][0]["text"], a.text.substr(0, a.text.find(stop)));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_LT(j["usage"]["completion_tokens"].get<size_t>(), a.tokens.size());
}

// Logprobs are log_softmax of the logits each token was sampled from: a greedy token's top
// logprob is its own, and the distribution's mass is at most 1.
TEST_F(ServeTest, LogprobsAreThoseOfTheChosenTokens) {
  auto r = post("/v1/chat/completions", json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 5},
                                             {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 3}}.dump());
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  auto j = json::parse(r->body);
  const auto& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), j["usage"]["completion_tokens"].get<size_t>());
  for (const auto& t : content) {
    ASSERT_EQ(t["top_logprobs"].size(), 3u);
    EXPECT_EQ(t["top_logprobs"][0]["token"], t["token"]);
    EXPECT_FLOAT_EQ(t["top_logprobs"][0]["logprob"].get<float>(), t["logprob"].get<float>());
    double mass = 0;
    for (const auto& x : t["top_logprobs"]) {
      EXPECT_LE(x["logprob"].get<double>(), 0);
      mass += std::exp(x["logprob"].get<double>());
    }
    EXPECT_LE(mass, 1.0 + 1e-5);
  }
}

// A server with one slot and no queue: a second request while one streams gets 429 with
// Retry-After; dropping the stream's connection cancels it and frees the slot long before
// its 3900 tokens would be done; SIGTERM lets a running stream finish and exits 0.
TEST_F(ServeTest, QueueFullAbortAndShutdown) {
  ServerProcess s("-m " + *program_ + " --parallel 1 --queue 0 --threads 1 --ctx-size 4000 --shutdown-grace 20");
  ASSERT_GT(s.port(), 0) << s.log();
  {
    // A field nested a million arrays deep (2 MB, under the default body limit) is refused
    // without recursing through it.
    const std::string deep = "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"temperature\": " +
                             std::string(1000000, '[') + std::string(1000000, ']') + "}";
    expect_error(client(s.port()).Post("/v1/chat/completions", deep, "application/json"), 400, "invalid_request_error",
                 "temperature", nullptr);
  }
  const std::string body = json{{"messages", {{{"role", "user"}, {"content", "go"}}}}, {"max_tokens", 3900}, {"temperature", 0},
                                {"stream", true}, {"logprobs", true}, {"top_logprobs", 20}}.dump();
  {
    RawConnection c(s.port());
    ASSERT_TRUE(c.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body));
    const std::string first = c.read_until("\"logprobs\":{");
    ASSERT_NE(first.find("text/event-stream"), std::string::npos) << first;
    auto busy = client(s.port()).Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})", "application/json");
    expect_error(busy, 429, "rate_limit_error", nullptr, "queue_full");
    EXPECT_EQ(busy->get_header_value("Retry-After"), "1");
    EXPECT_EQ(metric(s.port(), "offgraph:num_requests_running"), 1);
  }  // the client goes away mid-stream
  EXPECT_TRUE(drained(s.port(), std::chrono::milliseconds(3000))) << s.log();
  EXPECT_LT(metric(s.port(), "offgraph:generation_tokens_total"), 3000);
  auto after = client(s.port()).Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})", "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200) << after->body;

  // A client waiting for a non-streamed answer goes away: its sequence is cancelled too.
  const double generated_before = metric(s.port(), "offgraph:generation_tokens_total");
  {
    const std::string plain = json{{"prompt", "go"}, {"max_tokens", 3900}, {"temperature", 0}}.dump();
    RawConnection c(s.port());
    ASSERT_TRUE(c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(plain.size()) + "\r\n\r\n" + plain));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (metric(s.port(), "offgraph:num_requests_running") != 1 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(metric(s.port(), "offgraph:num_requests_running"), 1);
  }
  EXPECT_TRUE(drained(s.port(), std::chrono::milliseconds(3000))) << s.log();
  EXPECT_LT(metric(s.port(), "offgraph:generation_tokens_total") - generated_before, 3000);
  EXPECT_EQ(metric(s.port(), "offgraph:client_disconnects_total"), 2);  // the stream and the wait
  // Each abandoned request's log line says how far it got: far from its 3900 tokens (the
  // tiny model makes them in about 3.5 s here, so a request left running would show them).
  for (const char* line : {"POST /v1/chat/completions 200 prompt_tokens=[0-9]+ completion_tokens=([0-9]+)",
                           "POST /v1/completions 499 prompt_tokens=[0-9]+ completion_tokens=([0-9]+)"}) {
    std::smatch m;
    const std::string log = s.log();
    ASSERT_TRUE(std::regex_search(log, m, std::regex(line))) << line << "\n" << log;
    EXPECT_LT(std::stoi(m[1]), 1000) << m[0];
  }

  // SIGTERM while a stream runs: it finishes ([DONE]) and the server exits 0.
  RawConnection c(s.port());
  const std::string short_body = json{{"prompt", {1, 2, 3}}, {"max_tokens", 300}, {"temperature", 0}, {"stream", true},
                                      {"logprobs", 5}}.dump();
  ASSERT_TRUE(c.send("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(short_body.size()) + "\r\n\r\n" + short_body));
  c.read_until("data: ");
  ::kill(s.pid(), SIGTERM);
  const std::string all = c.read_until("data: [DONE]");
  EXPECT_NE(all.find("\"finish_reason\":\"length\""), std::string::npos);
  EXPECT_NE(all.find("data: [DONE]"), std::string::npos) << all.substr(0, 3000) << "\n...\n" << all.substr(all.size() > 3000 ? all.size() - 3000 : 0);
  EXPECT_EQ(s.stop(), 0) << s.log();
  EXPECT_NE(s.log().find("POST /v1/chat/completions 200 prompt_tokens="), std::string::npos) << s.log();
}

// A client that trickles its header (a byte every 50 ms) gets 408 once --header-timeout
// passes, and never holds a slot: with --parallel 1 another request is answered meanwhile.
// A connection left idle closes at the same bound.
TEST_F(ServeTest, SlowClientsAreTimedOutWithoutHoldingASlot) {
  ServerProcess s("-m " + *program_ + " --parallel 1 --threads 1 --ctx-size 256 --header-timeout 1");
  ASSERT_GT(s.port(), 0) << s.log();
  RawConnection slow(s.port()), idle(s.port());
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n";
  const auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  for (size_t i = 0; i < head.size() && !closed; ++i) {
    if (i == 10) {  // mid-trickle: the server answers someone else
      auto r = client(s.port()).Post("/v1/completions", R"({"prompt": [1, 2, 3], "max_tokens": 2})", "application/json");
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 200) << r->body;
    }
    if (!slow.send(head.substr(i, 1))) break;
    closed = slow.wait_closed(std::chrono::milliseconds(50));
  }
  closed = closed || slow.wait_closed(std::chrono::milliseconds(3000));
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(4000));
  EXPECT_EQ(slow.received().rfind("HTTP/1.1 408", 0), 0u) << slow.received();
  EXPECT_TRUE(idle.wait_closed(std::chrono::milliseconds(3000)));
  EXPECT_EQ(idle.received(), "");
  EXPECT_TRUE(drained(s.port()));
  EXPECT_EQ(s.stop(), 0) << s.log();
}

// `--cache-dir`: a restarted server restores the prompt it saw before from disk and answers
// exactly as the cold run did; another program (the same checkpoint exported in bf16) shares
// the directory but reads nothing from it.
TEST_F(ServeTest, RestartedServerWithCacheDirRestoresPromptsFromDisk) {
  TempDir dir;
  const std::string args = " --parallel 1 --threads 1 --ctx-size 256 --cache-dir " + dir.path();
  const std::string user = "A question long enough to span a few blocks of sixteen tokens, asked before the restart "
                           "and asked again after it: which numbers follow one, two and three?";
  const std::string body =
      json{{"messages", {{{"role", "user"}, {"content", user}}}}, {"max_tokens", 6}, {"temperature", 0}}.dump();
  auto ask = [&](const std::string& program) {
    ServerProcess s("-m " + program + args);
    EXPECT_GT(s.port(), 0) << s.log();
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(60, 0);
    auto r = c.Post("/v1/chat/completions", body, "application/json");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no response") << s.log();
    EXPECT_EQ(s.stop(), 0) << s.log();
    return r && r->status == 200 ? json::parse(r->body) : json::object();
  };
  const json cold = ask(*program_), warm = ask(*program_);
  ASSERT_TRUE(cold.contains("usage") && warm.contains("usage"));
  EXPECT_EQ(cold["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(warm["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
            warm["usage"]["prompt_tokens"].get<int64_t>() - 1)
      << "all but the last prompt token restored from the previous server's files";
  EXPECT_EQ(warm["choices"][0]["message"]["content"], cold["choices"][0]["message"]["content"]);
  EXPECT_EQ(warm["choices"][0]["message"]["content"], alone(chat_prompt(user), 6).text);
  const json other = ask(export_to(*gen_, "p_bf16.ogp", "bf16", 16, 4096));
  ASSERT_TRUE(other.contains("usage"));
  EXPECT_EQ(other["usage"]["prompt_tokens_details"]["cached_tokens"], 0) << "another program must not read the files";
}

TEST(ServeCli, BadFlagsAndUnloadableProgramsExitWithAMessage) {
  auto r = run_offgraph("serve -m nothing.ogp --port 0 --parallel 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--parallel 0 must be at least 1"), std::string::npos) << r.err;
  r = run_offgraph("serve -m nothing.ogp --port 0 --prompt-step-ratio 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--prompt-step-ratio"), std::string::npos) << r.err;
  r = run_offgraph("serve -m nothing.ogp --port 70000");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  r = run_offgraph("serve -m nothing.ogp --cache-dir /tmp --cache-ram 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--cache-dir needs"), std::string::npos) << r.err;
  r = run_offgraph("serve -m nothing.ogp --cache-dir /tmp --cache-dir-mb 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The port is bound first (so /health can say 503 while loading); a program that cannot
  // load stops the server with the loader's error and its exit code.
  r = run_offgraph("serve -m /nonexistent/p.ogp --host 127.0.0.1 --port 0");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/p.ogp"), std::string::npos) << r.err;
}


// response_format json_schema at temperature 1, random weights: every reply is a JSON text the
// schema accepts (checked field by field here, independently of the grammar), ending with
// finish_reason "stop"; the completions endpoint takes it too; json_object gives an object.
TEST_F(ServeTest, StructuredOutputsFollowTheSchemaAtTemperatureOne) {
  const json schema = json::parse(R"({"type": "object",
    "properties": {"name": {"type": "string", "maxLength": 10}, "n": {"type": "integer"},
                   "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 2}},
    "required": ["name", "n"], "additionalProperties": false})");
  const json format = {{"type", "json_schema"}, {"json_schema", {{"name", "item"}, {"schema", schema}, {"strict", true}}}};
  for (int seed = 0; seed < 4; ++seed) {
    const bool chat = seed % 2 == 0;
    json body = {{"max_tokens", 200}, {"temperature", 1}, {"seed", seed}, {"response_format", format}};
    if (chat) body["messages"] = {{{"role", "user"}, {"content", "an item, as JSON"}}};
    else body["prompt"] = "an item, as JSON:";
    auto r = post(chat ? "/v1/chat/completions" : "/v1/completions", body.dump());
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    const json reply = json::parse(r->body)["choices"][0];
    EXPECT_EQ(reply["finish_reason"], "stop") << reply;
    const std::string text = chat ? reply["message"]["content"].get<std::string>() : reply["text"].get<std::string>();
    const json j = json::parse(text, nullptr, false);
    ASSERT_TRUE(j.is_object()) << text;
    ASSERT_TRUE(j.contains("name") && j["name"].is_string()) << text;
    ASSERT_TRUE(j.contains("n") && j["n"].is_number_integer()) << text;
    for (const auto& [k, v] : j.items()) EXPECT_TRUE(k == "name" || k == "n" || k == "tags") << text;
    if (j.contains("tags")) {
      ASSERT_TRUE(j["tags"].is_array() && j["tags"].size() <= 2) << text;
      for (const auto& t : j["tags"]) EXPECT_TRUE(t == "x" || t == "y") << text;
    }
  }
  auto r = post("/v1/chat/completions", json{{"messages", {{{"role", "user"}, {"content", "anything"}}}}, {"max_tokens", 40},
                                             {"seed", 9}, {"response_format", {{"type", "json_object"}}}}
                                            .dump());
  ASSERT_TRUE(r && r->status == 200);
  const json reply = json::parse(r->body)["choices"][0];
  const std::string text = reply["message"]["content"].get<std::string>();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text[0], '{') << text;
  if (reply["finish_reason"] == "stop") EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
  EXPECT_TRUE(drained(server_->port()));
}

// logit_bias +100 on a token makes greedy decoding pick it every time.
TEST_F(ServeTest, LogitBiasSteersTheSampler) {
  const int32_t forced = 1234;
  auto r = post("/v1/completions", json{{"prompt", "x"}, {"max_tokens", 3}, {"temperature", 0},
                                        {"logit_bias", {{std::to_string(forced), 100}}}, {"logprobs", 1}}
                                       .dump());
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  auto tok = post("/tokenize", json{{"content", json::parse(r->body)["choices"][0]["text"]}}.dump());
  ASSERT_TRUE(tok && tok->status == 200);
  EXPECT_EQ(json::parse(tok->body)["tokens"], json({forced, forced, forced})) << r->body;
}


// Tools in the generic JSON format: calls valid against their tool's parameters (checked
// here field by field), finish_reason "tool_calls", content null; named and single-call
// choices hold; streamed calls equal the non-streamed ones for the same seed; a follow-up
// turn with the tool's result is rendered by the template (prompt_tokens as it counts them).
TEST_F(ServeTest, ToolCallsFollowTheirParametersAndStreamAlike) {
  const json tools = json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
        "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
      "properties": {"zone": {"type": "string", "maxLength": 8}}, "required": ["zone"], "additionalProperties": false}}}])");
  const json messages = {{{"role", "user"}, {"content", "What's the weather in Paris?"}}};
  const auto check_call = [](const json& call, const std::string& want_name) {
    ASSERT_EQ(call["type"], "function") << call;
    ASSERT_TRUE(call["id"].is_string() && !call["id"].get<std::string>().empty()) << call;
    const std::string name = call["function"]["name"];
    const json args = json::parse(call["function"]["arguments"].get<std::string>());
    ASSERT_TRUE(args.is_object()) << call;
    if (!want_name.empty()) EXPECT_EQ(name, want_name);
    if (name == "get_weather") {
      ASSERT_TRUE(args.contains("city") && args["city"].is_string()) << call;
      for (const auto& [k, v] : args.items()) EXPECT_TRUE(k == "city" || k == "unit") << call;
      if (args.contains("unit")) EXPECT_TRUE(args["unit"] == "celsius" || args["unit"] == "fahrenheit") << call;
    } else {
      ASSERT_EQ(name, "get_time") << call;
      ASSERT_TRUE(args.contains("zone") && args["zone"].is_string() && args.size() == 1) << call;
    }
  };
  for (int seed = 0; seed < 4; ++seed) {
    json choice = seed == 1 ? json{{"type", "function"}, {"function", {{"name", "get_time"}}}} : json("required");
    // One call each (a random model would go on adding calls to a parallel list), the context
    // the limit.
    json body = {{"messages", messages}, {"tools", tools}, {"tool_choice", choice}, {"temperature", 1}, {"seed", seed},
                 {"parallel_tool_calls", false}};
    auto r = post("/v1/chat/completions", body.dump());
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    const json reply = json::parse(r->body)["choices"][0];
    ASSERT_EQ(reply["finish_reason"], "tool_calls") << reply;
    EXPECT_TRUE(reply["message"]["content"].is_null()) << reply;
    const json& calls = reply["message"]["tool_calls"];
    ASSERT_TRUE(calls.is_array() && !calls.empty()) << reply;
    EXPECT_EQ(calls.size(), 1u) << "parallel_tool_calls false: one call";
    for (const json& c : calls) check_call(c, seed == 1 ? "get_time" : "");
    // The same request streamed: the deltas add up to the same calls (ids aside).
    body["stream"] = true;
    auto s = post("/v1/chat/completions", body.dump());
    ASSERT_TRUE(s && s->status == 200);
    json streamed = json::array();
    std::string finish;
    std::istringstream lines(s->body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("data: {", 0) != 0) continue;
      const json chunk = json::parse(line.substr(6));
      const json& ch = chunk["choices"][0];
      if (ch["finish_reason"].is_string()) finish = ch["finish_reason"];
      if (!ch["delta"].contains("tool_calls")) continue;
      for (const json& d : ch["delta"]["tool_calls"]) {
        const size_t i = d["index"];
        if (streamed.size() <= i) streamed.push_back({{"name", ""}, {"arguments", ""}});
        if (d["function"].contains("name")) streamed[i]["name"] = d["function"]["name"];
        streamed[i]["arguments"] = streamed[i]["arguments"].get<std::string>() + d["function"]["arguments"].get<std::string>();
      }
    }
    EXPECT_EQ(finish, "tool_calls");
    ASSERT_EQ(streamed.size(), calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(streamed[i]["name"], calls[i]["function"]["name"]);
      EXPECT_EQ(streamed[i]["arguments"], calls[i]["function"]["arguments"]);
    }
  }
  // auto: a call or an answer, and finish_reason says which.
  auto a = post("/v1/chat/completions",
                json{{"messages", messages}, {"tools", tools}, {"seed", 5}, {"parallel_tool_calls", false}}.dump());
  ASSERT_TRUE(a && a->status == 200);
  const json auto_reply = json::parse(a->body)["choices"][0];
  if (auto_reply["finish_reason"] == "tool_calls") {
    for (const json& c : auto_reply["message"]["tool_calls"]) check_call(c, "");
  } else {
    EXPECT_TRUE(auto_reply["message"]["content"].is_string()) << auto_reply;
    EXPECT_FALSE(auto_reply["message"].contains("tool_calls")) << auto_reply;
  }
  // The follow-up turn: the call (arguments as JSON text, as clients send them) and its result.
  json turn = messages;
  turn.push_back({{"role", "assistant"}, {"content", nullptr},
                  {"tool_calls", {{{"id", "call_1"}, {"type", "function"},
                                   {"function", {{"name", "get_weather"}, {"arguments", R"({"city": "Paris"})"}}}}}}});
  turn.push_back({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "21 C"}});
  auto f = post("/v1/chat/completions", json{{"messages", turn}, {"tools", tools}, {"tool_choice", "none"}, {"max_tokens", 4}}.dump());
  ASSERT_TRUE(f && f->status == 200) << (f ? f->body : "");
  auto model = runtime::Model::load(*program_);
  auto text = generate::load_model_text(**model, "");
  chat::RenderOptions o = text->render;
  o.extra_context["tools"] = nlohmann::ordered_json::parse(tools.dump());
  auto with_mapping = nlohmann::ordered_json::parse(turn.dump());
  with_mapping[1]["tool_calls"][0]["function"]["arguments"] = nlohmann::ordered_json{{"city", "Paris"}};
  auto rendered = text->chat_template->render_json(with_mapping, o);
  ASSERT_TRUE(rendered.is_ok()) << rendered.status().message();
  EXPECT_NE(rendered->find("21 C"), std::string::npos) << *rendered;
  EXPECT_EQ(json::parse(f->body)["usage"]["prompt_tokens"], text->tokenizer.encode(*rendered, false)->size());
  EXPECT_TRUE(drained(server_->port()));
}

}  // namespace
}  // namespace og
