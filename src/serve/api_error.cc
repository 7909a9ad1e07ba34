#include "serve/api_error.h"

namespace og::serve {

nlohmann::ordered_json ApiError::to_json() const {
  nlohmann::ordered_json e;
  e["message"] = message;
  e["type"] = type;
  e["param"] = param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param);
  e["code"] = code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(code);
  return {{"error", e}};
}

ApiError invalid_request(std::string message, std::string param, std::string code) {
  return {.status = 400, .message = std::move(message), .param = std::move(param), .code = std::move(code)};
}

}  // namespace og::serve
