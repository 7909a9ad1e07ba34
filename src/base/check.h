// OG_CHECK: for broken invariants only (programming errors), never for user input.
// Aborts with file:line and the failed condition.
#pragma once

#include <cstdio>
#include <cstdlib>

#define OG_CHECK(cond)                                                              \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "offgraph internal error: %s:%d: check failed: %s\n",    \
                   __FILE__, __LINE__, #cond);                                      \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
