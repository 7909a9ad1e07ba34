#include "http/wire_format.h"

#include <fmt/format.h>

namespace og::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string response_head(const HeadOptions& o, const Headers& extra) {
  std::string h = fmt::format("HTTP/1.1 {} {}\r\n", o.status, reason_phrase(o.status));
  if (!o.content_type.empty()) h += fmt::format("Content-Type: {}\r\n", o.content_type);
  if (o.status == 204) {
    // no body, so neither Content-Length nor chunking (RFC 9110 §8.6, RFC 9112 §6.1)
  } else if (o.content_length) {
    h += fmt::format("Content-Length: {}\r\n", *o.content_length);
  } else if (o.chunked) {
    h += "Transfer-Encoding: chunked\r\n";
  }
  if (o.close) {
    h += "Connection: close\r\n";
  } else if (o.http10_keep_alive) {
    h += "Connection: keep-alive\r\n";
  }
  for (const auto& [name, value] : extra.fields()) {
    // The framing fields are the transport's alone (a second Content-Length would make the
    // response ambiguous to a client or proxy: RFC 9112 §6.3).
    if (iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding") || iequals(name, "Connection") ||
        iequals(name, "Content-Type"))
      continue;
    h += fmt::format("{}: {}\r\n", name, value);
  }
  h += "\r\n";
  return h;
}

std::string chunk(std::string_view data) { return fmt::format("{:x}\r\n{}\r\n", data.size(), data); }

}  // namespace og::http
