// OpenAI request bodies parsed and validated into plain structs: every field of a request
// is read here and nowhere else. Nothing here knows a model: completion_handler turns these
// into scheduler requests.
//
// Defaults are OpenAI's when a field is absent or null (temperature 1, top_p 1, no top-k,
// no min-p); unknown fields are ignored. Refused with a 400 naming the field: n > 1,
// wrong types, out-of-range values (a schema the compiler refuses: at start_job).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/sampler.h"
#include "serve/api_error.h"
#include "serve/tool_calls.h"

namespace og::serve {

struct ChatMessage {
  std::string role;  // system, user or assistant ("developer" is read as system)
  std::string content;
};

// One prompt of /v1/completions: text (encoded with the tokenizer's special tokens) or ids.
struct PromptInput {
  std::string text;
  std::vector<int32_t> tokens;
  bool is_tokens = false;
};

struct CompletionRequest {
  bool chat = false;                    // /v1/chat/completions; else /v1/completions
  int32_t n = 1;                        // choices per prompt
  std::vector<PromptInput> prompts;     // completions: every prompt of the request, in order
  std::string model;                    // empty when absent
  std::vector<ChatMessage> messages;    // chat
  std::string prompt_text;              // completions, prompt given as text
  std::vector<int32_t> prompt_tokens;   // completions, prompt given as token ids
  bool prompt_is_tokens = false;
  bool echo = false;                    // completions: the prompt's text leads the reply's
  int64_t max_tokens = -1;              // -1 (absent in chat): until a stop or the context is full; else >= 1
  generate::SamplingParams sampling;    // OpenAI defaults; seed random when absent
  bool seeded = false;
  std::vector<std::string> stop;
  // vLLM's: more ids that end the reply (not emitted), and ignore_eos: the model's own end
  // ids do not (only max_tokens, the context, a stop string or these ids end it).
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  bool stream = false;
  bool include_usage = false;           // stream_options.include_usage
  bool logprobs = false;
  int32_t top_logprobs = 0;
  // response_format json_object ({"type": "object"}) or json_schema: the reply is constrained to it.
  std::optional<nlohmann::ordered_json> json_schema;
  // Chat with tools or tool messages: tools, tool_choice, parallel_tool_calls, and the messages
  // as the template reads them (tool_calls, tool_call_id; empty when neither is involved).
  ToolRequest tools;
  bool tool_messages = false;
  nlohmann::ordered_json messages_json;
  // Chat rendering, as vLLM and the reference server take them: variables for the template
  // (chat_template_kwargs, e.g. enable_thinking; reasoning_effort), the generation prompt
  // (add_generation_prompt), and continue_final_message: the reply continues the last,
  // assistant, message (the prompt ends where its content does).
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
  bool continue_final_message = false;
};

// The requests of a request's choices, choice index order (prompt by prompt, n each): each
// has one prompt (prompt_text / prompt_tokens), n = 1, and the seed plus its index, so a
// seeded request gives the same choices again and its choices differ from each other.
std::vector<CompletionRequest> choice_requests(const CompletionRequest& r);

// Parses a request body; on failure `error` is set and the request is meaningless.
struct ParsedRequest {
  CompletionRequest request;
  std::optional<ApiError> error;
};
ParsedRequest parse_completion_request(const std::string& body, bool chat);

// POST /tokenize {"content": "...", "add_special": false} and POST /detokenize {"tokens": [...]}.
struct TokenizeRequest {
  std::string content;
  bool add_special = false;
};
std::optional<ApiError> parse_tokenize(const std::string& body, TokenizeRequest& out);
std::optional<ApiError> parse_detokenize(const std::string& body, std::vector<int32_t>& out);

}  // namespace og::serve
