// Neutral results → OpenAI response JSON: whole bodies, stream chunks, usage, logprobs and
// finish_reason, for chat completions and (legacy) completions. Every field the server
// writes back is written here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/logprobs.h"
#include "generate/scheduler.h"
#include "serve/tool_calls.h"
#include "toolcall/reply_parser.h"

namespace og::serve {

using ojson = nlohmann::ordered_json;

// What a response and each of its chunks carry alike.
struct ResponseIdentity {
  bool chat = false;
  std::string id;
  int64_t created = 0;
  std::string model;
};

const char* finish_reason(generate::StopReason r);
ojson usage_json(int64_t prompt_tokens, const generate::SequenceStats& st);
// The usage of a request's choices (usage_json each, choice index order, n per prompt): the
// prompt tokens (and cached ones) of each prompt once, the completion tokens of every choice.
ojson choices_usage(const std::vector<ojson>& usages, int32_t n);
// Chat: {"content": [{token, logprob, bytes, top_logprobs}]}.
ojson chat_logprobs_json(const std::vector<generate::TokenLogprob>& lps);
// Completions: {tokens, token_logprobs, top_logprobs, text_offset}, offsets from `offset`.
ojson completion_logprobs_json(const std::vector<generate::TokenLogprob>& lps, size_t offset);
// Either of the two for the request kind.
ojson logprobs_json(bool chat, const std::vector<generate::TokenLogprob>& lps, size_t offset);

// A whole (non-streamed) response.
ojson completion_body(const ResponseIdentity& id, const std::string& text, ojson logprobs, const char* finish, ojson usage);

// A whole chat response read by a reply parser (tools, reasoning): `content` (null when the
// reply was only calls), `reasoning_content` when there was reasoning, `tool_calls`.
ojson reply_body(const ResponseIdentity& id, const toolcall::Reply& reply, ojson logprobs, const char* finish, ojson usage);
// The streamed deltas of parsed events: {"content"}, {"reasoning_content"}, a call's
// {"tool_calls": [{index, id, type, function: {name, arguments: ""}}]}, then its
// {"tool_calls": [{index, function: {arguments: fragment}}]}.
std::vector<ojson> reply_deltas(const std::vector<toolcall::ReplyEvent>& events);
// "tool_calls" when the reply made calls and ended by itself, else the stop's own reason
// ("length" when max_tokens cut it, as OpenAI's).
const char* reply_finish_reason(bool made_calls, generate::StopReason r);

// One streamed choice: chat `delta` (an object) or completions `text` (a string).
ojson stream_choice(bool chat, ojson delta_or_text, ojson logprobs, ojson finish, int32_t index = 0);
// A chunk holding `choice` (null: none); usage null when the client asked for usage at the end.
ojson stream_chunk(const ResponseIdentity& id, ojson choice, bool usage_null);

// JSON text for the wire (invalid UTF-8, should any reach here, replaced rather than thrown).
std::string to_text(const ojson& j);

}  // namespace og::serve
