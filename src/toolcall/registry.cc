#include "toolcall/registry.h"

#include "toolcall/framed_calls.h"
#include "toolcall/generic_json.h"

namespace og::toolcall {
namespace {

std::string no_hint(const ToolSet&) { return ""; }

// One line per format.
const Format kFormats[] = {
    {"framed", no_hint, framed_grammar, framed_parser},
    {"tagged", no_hint, framed_grammar, framed_parser},  // framed, with arguments between tags (syntax.h)
    {"generic_json", generic_hint, generic_grammar, generic_parser},
};

}  // namespace

const Format* find_format(std::string_view name) {
  for (const Format& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

std::string format_names() {
  std::string s;
  for (const Format& f : kFormats) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

}  // namespace og::toolcall
