#include "serve/openai_request.h"

#include <charconv>
#include <set>

#include <cmath>
#include <random>

#include <fmt/format.h>

namespace og::serve {
namespace {

using json = nlohmann::json;

// A value for an error message: scalars as JSON (long strings cut), containers by type
// (dumping is recursive, and a request may nest arrays millions deep).
std::string describe(const json& v) {
  if (v.is_array() || v.is_object()) return std::string("an ") + v.type_name();
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 64 ? s.substr(0, 61) + "..." : s;
}

// Reads one optional field of a request object; the first error sticks.
class Fields {
 public:
  explicit Fields(const json& obj) : obj_(obj) {}
  std::optional<ApiError> error;

  // The value of `name`, or null when absent or null.
  const json* get(const char* name) const {
    auto it = obj_.find(name);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  bool fail(const char* name, const std::string& message) {
    if (!error) error = invalid_request(message, name);
    return false;
  }
  bool number(const char* name, double lo, double hi, float& out) {
    const json* v = get(name);
    if (!v) return true;
    if (!v->is_number()) return fail(name, fmt::format("'{}' must be a number, got {}", name, describe(*v)));
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi)) return fail(name, fmt::format("'{}' must be in [{}, {}], got {}", name, lo, hi, describe(*v)));
    out = static_cast<float>(x);
    return true;
  }
  bool integer(const char* name, int64_t lo, int64_t hi, int64_t& out) {
    const json* v = get(name);
    if (!v) return true;
    if (!v->is_number_integer())
      return fail(name, fmt::format("'{}' must be an integer, got {}", name, describe(*v)));
    // (nlohmann reads a literal without a sign as unsigned: both bounds apply to it too.)
    const bool inside = v->is_number_unsigned()
                            ? v->get<uint64_t>() <= static_cast<uint64_t>(hi) && (lo <= 0 || v->get<uint64_t>() >= static_cast<uint64_t>(lo))
                            : v->get<int64_t>() >= lo && v->get<int64_t>() <= hi;
    if (!inside)
      return fail(name, fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, describe(*v)));
    out = v->get<int64_t>();
    return true;
  }
  bool boolean(const char* name, bool& out) {
    const json* v = get(name);
    if (!v) return true;
    if (!v->is_boolean()) return fail(name, fmt::format("'{}' must be a boolean, got {}", name, describe(*v)));
    out = v->get<bool>();
    return true;
  }
  bool string(const char* name, std::string& out) {
    const json* v = get(name);
    if (!v) return true;
    if (!v->is_string()) return fail(name, fmt::format("'{}' must be a string, got {}", name, describe(*v)));
    out = v->get<std::string>();
    return true;
  }

 private:
  const json& obj_;
};

std::optional<json> parse_object(const std::string& body, std::optional<ApiError>& error) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = invalid_request("the request body is not valid JSON");
    return std::nullopt;
  }
  if (!j.is_object()) {
    error = invalid_request("the request body must be a JSON object");
    return std::nullopt;
  }
  return j;
}

bool token_array(const json& v, std::vector<int32_t>& out) {
  if (!v.is_array()) return false;
  out.clear();
  for (const auto& t : v) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX) return false;
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return true;
}

// Content as a string or an array of {"type": "text", "text": ...} parts.
bool message_content(const json& c, std::string& out, std::string& why) {
  if (c.is_null()) return true;
  if (c.is_string()) {
    out = c.get<std::string>();
    return true;
  }
  if (!c.is_array()) {
    why = "must be a string or an array of text parts";
    return false;
  }
  for (const auto& part : c) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      why = "parts must be objects with a 'type'";
      return false;
    }
    if (part["type"] != "text") {
      why = fmt::format("part type {} is not supported (only text)", describe(part["type"]));
      return false;
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      why = "a text part needs a string 'text'";
      return false;
    }
    out += part["text"].get<std::string>();
  }
  return true;
}

bool parse_messages(const json& body, CompletionRequest& r, std::optional<ApiError>& error) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) {
    error = invalid_request("'messages' must be a non-empty array", "messages");
    return false;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      error = invalid_request(where + " must be an object with a string 'role'", where);
      return false;
    }
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      error = invalid_request(fmt::format("{}.role '{}' is not supported (system, user, assistant, tool)", where, role),
                              where + ".role");
      return false;
    }
    if (role == "tool") r.tool_messages = true;
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      const json& calls = m["tool_calls"];
      bool ok = role == "assistant" && calls.is_array();
      for (size_t k = 0; ok && k < calls.size(); ++k) {
        const json& c = calls[k];
        ok = c.is_object() && c.contains("function") && c["function"].is_object() && c["function"].contains("name") &&
             c["function"]["name"].is_string() &&
             (!c["function"].contains("arguments") || c["function"]["arguments"].is_string() || c["function"]["arguments"].is_object());
      }
      if (!ok) {
        error = invalid_request(where + ".tool_calls must be an assistant's array of {\"type\": \"function\", \"function\": "
                                        "{\"name\", \"arguments\"}}",
                                where + ".tool_calls");
        return false;
      }
      r.tool_messages = true;
    }
    ChatMessage msg{.role = role, .content = ""};
    std::string why;
    if (m.contains("content") && !message_content(m["content"], msg.content, why)) {
      error = invalid_request(where + ".content " + why, where + ".content");
      return false;
    }
    r.messages.push_back(std::move(msg));
  }
  return true;
}

// The choices of one request, all prompts and n together, at most this many.
constexpr int64_t kMaxChoices = 128;

bool parse_prompt(const json& body, CompletionRequest& r, std::optional<ApiError>& error) {
  auto it = body.find("prompt");
  const char* kWhy = "'prompt' must be a string, an array of token ids, or an array of either (several prompts)";
  if (it == body.end() || it->is_null()) {
    error = invalid_request("'prompt' is required", "prompt");
    return false;
  }
  // Several prompts: an array whose entries are strings or arrays (of ids).
  const bool several = it->is_array() && !it->empty() && ((*it)[0].is_string() || (*it)[0].is_array());
  std::vector<const json*> items;
  if (several) {
    for (const json& p : *it) items.push_back(&p);
  } else {
    items.push_back(&*it);
  }
  if (static_cast<int64_t>(items.size()) > kMaxChoices) {
    error = invalid_request(fmt::format("at most {} prompts in a request", kMaxChoices), "prompt");
    return false;
  }
  for (const json* p : items) {
    PromptInput in;
    if (p->is_string()) {
      in.text = p->get<std::string>();
    } else if (token_array(*p, in.tokens)) {
      in.is_tokens = true;
    } else {
      error = invalid_request(kWhy, "prompt");
      return false;
    }
    r.prompts.push_back(std::move(in));
  }
  r.prompt_text = r.prompts[0].text;
  r.prompt_tokens = r.prompts[0].tokens;
  r.prompt_is_tokens = r.prompts[0].is_tokens;
  return true;
}

// The messages as the chat template reads them (transformers' shape): content a string (text
// parts joined) or null, tool_calls with `arguments` as a mapping when the client sent JSON
// text of an object (templates write them with `| tojson`), tool_call_id and name kept.
nlohmann::ordered_json template_messages(const nlohmann::ordered_json& messages) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& m : messages) {
    nlohmann::ordered_json msg = {{"role", m["role"] == "developer" ? nlohmann::ordered_json("system") : m["role"]}};
    std::string text, why;
    const json content = m.contains("content") ? json::parse(m["content"].dump()) : json(nullptr);
    if (content.is_null()) msg["content"] = nullptr;
    else if (message_content(content, text, why)) msg["content"] = text;
    if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
      msg["tool_calls"] = m["tool_calls"];
      for (auto& c : msg["tool_calls"]) {
        auto& f = c["function"];
        if (f.contains("arguments") && f["arguments"].is_string()) {
          auto args = nlohmann::ordered_json::parse(f["arguments"].get<std::string>(), nullptr, false);
          if (args.is_object()) f["arguments"] = args;
        }
        if (!c.contains("type")) c["type"] = "function";
      }
    }
    for (const char* key : {"tool_call_id", "name", "reasoning_content"})
      if (m.contains(key) && m[key].is_string()) msg[key] = m[key];
    out.push_back(std::move(msg));
  }
  return out;
}

// response_format: "text"; "json_object" (any JSON object); "json_schema" with
// json_schema.schema (any JSON value when absent), read again from the body in its own key
// order, which is the order the reply's objects are written in.
void parse_response_format(const std::string& body, Fields& f, CompletionRequest& r) {
  const json* rf = f.get("response_format");
  if (!rf) return;
  if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string()) {
    f.fail("response_format", "'response_format' must be an object with a string 'type'");
    return;
  }
  const std::string type = (*rf)["type"].get<std::string>();
  if (type == "text") return;
  if (type == "json_object") {
    r.json_schema = nlohmann::ordered_json{{"type", "object"}};
    return;
  }
  if (type != "json_schema") {
    f.fail("response_format.type", fmt::format("'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", got {}",
                                               describe((*rf)["type"])));
    return;
  }
  auto js = rf->find("json_schema");
  if (js == rf->end() || !js->is_object()) {
    f.fail("response_format.json_schema", "'response_format.json_schema' must be an object holding the 'schema'");
    return;
  }
  auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null()) {
    r.json_schema = nlohmann::ordered_json::object();
    return;
  }
  if (!schema->is_object() && !schema->is_boolean()) {
    f.fail("response_format.json_schema.schema", "'response_format.json_schema.schema' must be a JSON Schema (an object)");
    return;
  }
  r.json_schema = nlohmann::ordered_json::parse(body)["response_format"]["json_schema"]["schema"];
}

// logit_bias: {"token id": bias in [-100, 100]}.
void parse_logit_bias(Fields& f, CompletionRequest& r) {
  const json* lb = f.get("logit_bias");
  if (!lb) return;
  if (!lb->is_object()) {
    f.fail("logit_bias", "'logit_bias' must be an object mapping token ids to numbers");
    return;
  }
  for (const auto& [key, v] : lb->items()) {
    int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0 || id > INT32_MAX) {
      f.fail("logit_bias", fmt::format("'logit_bias' keys must be token ids, got \"{}\"", key));
      return;
    }
    if (!v.is_number() || !(v.get<double>() >= -100 && v.get<double>() <= 100)) {
      f.fail("logit_bias", fmt::format("'logit_bias' values must be numbers in [-100, 100], got {} for {}", describe(v), key));
      return;
    }
    r.sampling.logit_bias.emplace_back(static_cast<int32_t>(id), v.get<float>());
  }
}

// chat_template_kwargs, reasoning_effort, add_generation_prompt, continue_final_message.
void parse_rendering(const json& j, const std::string& body, Fields& f, CompletionRequest& r) {
  if (const json* k = f.get("chat_template_kwargs")) {
    if (!k->is_object()) f.fail("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    else r.template_kwargs = nlohmann::ordered_json::parse(body).at("chat_template_kwargs");  // in the body's order
  }
  if (const json* e = f.get("reasoning_effort")) {
    static const std::set<std::string> kEfforts = {"none", "minimal", "low", "medium", "high"};
    if (!e->is_string() || !kEfforts.contains(e->get<std::string>()))
      f.fail("reasoning_effort", fmt::format("'reasoning_effort' must be one of none, minimal, low, medium, high, got {}", describe(*e)));
    else if (!r.template_kwargs.contains("reasoning_effort"))
      r.template_kwargs["reasoning_effort"] = e->get<std::string>();
  }
  f.boolean("add_generation_prompt", r.add_generation_prompt);
  f.boolean("continue_final_message", r.continue_final_message);
  if (r.continue_final_message) {
    if (j.contains("add_generation_prompt") && r.add_generation_prompt)
      f.fail("continue_final_message", "'continue_final_message' and 'add_generation_prompt' cannot both be true");
    else if (r.messages.empty() || r.messages.back().role != "assistant")
      f.fail("continue_final_message", "'continue_final_message' needs the last message to be the assistant's");
    r.add_generation_prompt = false;
  }
}

}  // namespace

ParsedRequest parse_completion_request(const std::string& body, bool chat) {
  ParsedRequest out;
  CompletionRequest& r = out.request;
  r.chat = chat;
  // OpenAI's defaults; the completions API's max_tokens defaults to 16.
  r.sampling = {.temperature = 1, .top_k = 0, .top_p = 1, .min_p = 0, .repetition_penalty = 1, .repeat_last_n = -1};
  if (!chat) r.max_tokens = 16;
  auto j = parse_object(body, out.error);
  if (!j) return out;
  Fields f(*j);
  if (chat ? !parse_messages(*j, r, out.error) : !parse_prompt(*j, r, out.error)) return out;

  f.string("model", r.model);
  int64_t n = 1;
  if (f.integer("n", 1, kMaxChoices, n)) r.n = static_cast<int32_t>(n);
  const int64_t prompts = chat ? 1 : static_cast<int64_t>(r.prompts.size());
  if (n * prompts > kMaxChoices)
    f.fail("n", fmt::format("'n' ({}) times the {} prompts is more than {} choices", n, prompts, kMaxChoices));
  if (f.get("best_of")) {  // best_of = n is plain sampling; more would rank candidates by their logprobs
    int64_t best_of = 1;
    if (f.integer("best_of", 1, kMaxChoices, best_of) && best_of != n)
      f.fail("best_of", "'best_of' other than 'n' is not supported");
  }
  parse_response_format(body, f, r);
  if (chat && (f.get("tools") || f.get("tool_choice") || f.get("parallel_tool_calls") || r.tool_messages)) {
    // Read again in the body's own key order: parameters' properties are written in it, and
    // the template renders tools and messages as sent.
    const auto ordered = nlohmann::ordered_json::parse(body);
    if (auto e = parse_tool_request(ordered, r.tools); e && !f.error) f.error = e;
    r.messages_json = template_messages(ordered["messages"]);
  } else if (f.get("tools")) {
    f.fail("tools", "'tools' are for /v1/chat/completions");
  }
  if (const json* t = f.get("functions"); t && !(t->is_array() && t->empty()))
    f.fail("functions", "'functions' (function calling) is not supported");
  parse_logit_bias(f, r);
  // max_completion_tokens wins over the deprecated max_tokens when both are given. Both must
  // be at least 1, as OpenAI and vLLM require (0 would ask for an answer of nothing).
  // An echoed prompt may take no completion at all (max_tokens 0: its logprobs only, vLLM's rule).
  if (!chat) f.boolean("echo", r.echo);
  f.integer("max_tokens", r.echo ? 0 : 1, INT32_MAX, r.max_tokens);
  f.integer("max_completion_tokens", r.echo ? 0 : 1, INT32_MAX, r.max_tokens);
  f.number("temperature", 0, 2, r.sampling.temperature);
  f.number("top_p", 0, 1, r.sampling.top_p);
  if (r.sampling.top_p == 0) f.fail("top_p", "'top_p' must be greater than 0");
  int64_t top_k = 0;
  if (f.integer("top_k", -1, INT32_MAX, top_k)) r.sampling.top_k = static_cast<int32_t>(std::max<int64_t>(top_k, 0));
  f.number("min_p", 0, 1, r.sampling.min_p);
  f.number("repeat_penalty", 1e-6, 1e6, r.sampling.repetition_penalty);
  f.number("presence_penalty", -2, 2, r.sampling.presence_penalty);
  f.number("frequency_penalty", -2, 2, r.sampling.frequency_penalty);
  if (const json* s = f.get("seed")) {
    if (!s->is_number_integer()) f.fail("seed", fmt::format("'seed' must be an integer, got {}", describe(*s)));
    else {
      r.sampling.seed = s->is_number_unsigned() ? s->get<uint64_t>() : static_cast<uint64_t>(s->get<int64_t>());
      r.seeded = true;
    }
  }
  if (!r.seeded) r.sampling.seed = std::random_device{}() * 0x100000000ull + std::random_device{}();
  if (const json* s = f.get("stop")) {
    if (s->is_string()) {
      r.stop.push_back(s->get<std::string>());
    } else if (s->is_array() && s->size() <= 16) {
      for (const auto& x : *s) {
        if (!x.is_string()) {
          f.fail("stop", "'stop' must be a string or an array of strings");
          break;
        }
        r.stop.push_back(x.get<std::string>());
      }
    } else {
      f.fail("stop", "'stop' must be a string or an array of at most 16 strings");
    }
  }
  f.boolean("ignore_eos", r.ignore_eos);
  int64_t min_tokens = 0;
  if (f.integer("min_tokens", 0, INT32_MAX, min_tokens)) r.sampling.min_tokens = static_cast<int32_t>(min_tokens);
  if (r.max_tokens >= 0 && r.sampling.min_tokens > r.max_tokens)
    f.fail("min_tokens", fmt::format("'min_tokens' ({}) is more than 'max_tokens' ({})", r.sampling.min_tokens, r.max_tokens));
  if (const json* ids = f.get("stop_token_ids"); ids && (!token_array(*ids, r.stop_token_ids) || ids->size() > 64))
    f.fail("stop_token_ids", "'stop_token_ids' must be an array of at most 64 token ids");
  f.boolean("stream", r.stream);
  if (const json* so = f.get("stream_options")) {
    if (!so->is_object()) f.fail("stream_options", "'stream_options' must be an object");
    else if (so->contains("include_usage") && !(*so)["include_usage"].is_null()) {
      if (!(*so)["include_usage"].is_boolean())
        f.fail("stream_options", "'stream_options.include_usage' must be a boolean");
      else r.include_usage = (*so)["include_usage"].get<bool>();
    }
  }
  if (chat) {
    f.boolean("logprobs", r.logprobs);
    int64_t top = 0;
    if (f.integer("top_logprobs", 0, 20, top)) r.top_logprobs = static_cast<int32_t>(top);
    if (r.top_logprobs > 0 && !r.logprobs) f.fail("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  } else if (f.get("logprobs")) {
    int64_t top = 0;
    if (f.integer("logprobs", 0, 5, top)) {
      r.logprobs = true;
      r.top_logprobs = static_cast<int32_t>(top);
    }
  }
  if (chat) parse_rendering(*j, body, f, r);
  if (!chat) {
    // echo (read above): the reply's text starts with the prompt's (vLLM, OpenAI's legacy
    // API), and with logprobs so do the logprobs (the prompt's first token has none).
    // suffix asks for an insertion between prompt and suffix, which a causal step cannot do.
    if (const json* s = f.get("suffix"); s && !(s->is_string() && s->get<std::string>().empty()))
      f.fail("suffix", "'suffix' (text insertion) is not supported");
  }
  if (!f.error && !r.sampling.validate().is_ok()) f.fail("", r.sampling.validate().message());
  out.error = f.error;
  return out;
}

std::vector<CompletionRequest> choice_requests(const CompletionRequest& r) {
  std::vector<CompletionRequest> out;
  const size_t prompts = r.chat ? 1 : r.prompts.size();
  for (size_t p = 0; p < prompts; ++p)
    for (int32_t i = 0; i < r.n; ++i) {
      CompletionRequest c = r;
      c.n = 1;
      c.prompts.clear();
      if (!r.chat) {
        c.prompt_text = r.prompts[p].text;
        c.prompt_tokens = r.prompts[p].tokens;
        c.prompt_is_tokens = r.prompts[p].is_tokens;
      }
      c.sampling.seed = r.sampling.seed + out.size();
      out.push_back(std::move(c));
    }
  return out;
}

std::optional<ApiError> parse_tokenize(const std::string& body, TokenizeRequest& out) {
  std::optional<ApiError> error;
  auto j = parse_object(body, error);
  if (!j) return error;
  auto it = j->find("content");
  if (it == j->end() || !it->is_string()) return invalid_request("'content' must be a string", "content");
  out.content = it->get<std::string>();
  Fields f(*j);
  f.boolean("add_special", out.add_special);
  return f.error;
}

std::optional<ApiError> parse_detokenize(const std::string& body, std::vector<int32_t>& out) {
  std::optional<ApiError> error;
  auto j = parse_object(body, error);
  if (!j) return error;
  auto it = j->find("tokens");
  if (it == j->end() || !token_array(*it, out))
    return invalid_request("'tokens' must be an array of non-negative token ids", "tokens");
  return std::nullopt;
}

}  // namespace og::serve
