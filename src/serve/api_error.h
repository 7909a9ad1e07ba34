// The OpenAI error object, {"error": {"message", "type", "param", "code"}}, with the HTTP
// status it travels with. Every refusal of the server is one of these.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace og::serve {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null
  nlohmann::ordered_json to_json() const;
};

ApiError invalid_request(std::string message, std::string param = "", std::string code = "");

}  // namespace og::serve
