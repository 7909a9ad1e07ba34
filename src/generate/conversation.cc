#include "generate/conversation.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "generate/text_generation.h"
#include "generate/text_stream.h"

namespace og::generate {

Conversation::Conversation(runtime::Session& session, const ModelText& text, std::string system_prompt)
    : session_(session), text_(text) {
  if (!system_prompt.empty()) messages_.push_back({"system", std::move(system_prompt)});
}

Result<std::vector<int32_t>> Conversation::render_tokens(bool add_generation_prompt) const {
  return chat_tokens(text_, messages_, add_generation_prompt);
}

Result<GenerateStats> Conversation::turn(const std::string& user, const GenerateOptions& options,
                                         const std::function<void(const std::string&)>& on_text) {
  messages_.push_back({"user", user});
  auto tokens = render_tokens(true);
  if (!tokens.is_ok()) {
    messages_.pop_back();
    return tokens.status();
  }
  // Reuse the cached prefix; rewind to where the new rendering diverges.
  size_t common = 0;
  while (common < cached_.size() && common < tokens->size() && cached_[common] == (*tokens)[common]) ++common;
  if (common == tokens->size()) --common;  // at least one token must be fed to get logits
  if (!session_.rewind(static_cast<int64_t>(common)).is_ok()) {
    session_.clear();
    common = 0;
  }
  cached_.resize(common);
  TextStream stream(text_.tokenizer);
  Status stream_error;
  auto stats = generate(session_, std::span<const int32_t>(tokens->data() + common, tokens->size() - common), options,
                        [&](int32_t id) {
                          auto piece = stream.push(id);
                          if (!piece.is_ok()) {
                            stream_error = piece.status();
                            return false;
                          }
                          if (!piece->empty()) on_text(*piece);
                          return true;
                        });
  if (!stats.is_ok()) {
    messages_.pop_back();
    cached_.clear();
    session_.clear();
    return stats.status();
  }
  OG_TRY(stream_error);
  if (const std::string tail = stream.finish(); !tail.empty()) on_text(tail);
  const std::vector<int32_t>& generated = stream.tokens();
  // The session holds the prompt and every generated token but the last.
  cached_.insert(cached_.end(), tokens->begin() + static_cast<std::ptrdiff_t>(common), tokens->end());
  if (!generated.empty()) cached_.insert(cached_.end(), generated.begin(), generated.end() - 1);
  if (static_cast<int64_t>(cached_.size()) != session_.length()) {  // defensive: never trust a mismatch
    cached_.clear();
    session_.clear();
  }
  messages_.push_back({"assistant", text_.tokenizer.decode(generated, true)});
  return stats;
}

void Conversation::reset() {
  std::vector<chat::Message> keep;
  if (!messages_.empty() && messages_[0].role == "system") keep.push_back(messages_[0]);
  messages_ = keep;
  cached_.clear();
  session_.clear();
}

bool Conversation::undo() {
  if (messages_.size() < 2 || messages_.back().role != "assistant") return false;
  messages_.resize(messages_.size() - 2);
  return true;  // the next turn rewinds the cache to the common prefix
}

Status Conversation::save(const std::string& path) const {
  OG_TRY(session_.save(path));
  nlohmann::json j;
  j["messages"] = nlohmann::json::array();
  for (const auto& m : messages_) j["messages"].push_back({{"role", m.role}, {"content", m.content}});
  j["cached_tokens"] = cached_;
  std::ofstream out(path + ".json");
  out << j.dump();
  if (!out) return resource_error("{}.json: write failed", path);
  return Status::ok();
}

Status Conversation::load(const std::string& path) {
  OG_ASSIGN_OR_RETURN(std::string text, read_text_file(path + ".json"));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    std::vector<chat::Message> msgs;
    for (const auto& m : j.at("messages")) msgs.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
    std::vector<int32_t> cached = j.at("cached_tokens").get<std::vector<int32_t>>();
    OG_TRY(session_.load(path));
    if (static_cast<int64_t>(cached.size()) != session_.length()) {
      session_.clear();
      return bad_input("{}.json: {} cached tokens but the cache holds {}", path, cached.size(), session_.length());
    }
    messages_ = std::move(msgs);
    cached_ = std::move(cached);
  } catch (const nlohmann::json::exception& e) {
    return bad_input("{}.json: {}", path, e.what());
  }
  return Status::ok();
}

}  // namespace og::generate
