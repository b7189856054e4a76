// INSPECTOR_CHECK: internal invariants of the inspector core. A failed check is an inspector
// bug, never a user error (bad input is reported as a load error naming what and where).
//
//   INSPECTOR_CHECK(index < stages_.size(), "stage index out of range");
//
// Unlike ir/check.h it streams nothing: <iostream> would add ~100 KB to the wasm module.
#ifndef COIL_INSPECTOR_WEB_CORE_CHECK_H_
#define COIL_INSPECTOR_WEB_CORE_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define INSPECTOR_CHECK(condition, message)                                                      \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      std::fprintf(stderr, "%s:%d: internal error (coil inspector bug): check failed: %s: %s\n", \
                   __FILE__, __LINE__, #condition, message);                                     \
      std::abort();                                                                              \
    }                                                                                            \
  } while (0)

#endif  // COIL_INSPECTOR_WEB_CORE_CHECK_H_
