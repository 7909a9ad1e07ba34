#include "http/message.h"

#include <cctype>

namespace og::http {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  for (const auto& [n, v] : fields_)
    if (iequals(n, name)) return std::string_view(v);
  return std::nullopt;
}

}  // namespace og::http
