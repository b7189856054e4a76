// gtest's main for tests that load oneDNN (and so libgomp), leaving through _exit: under
// AddressSanitizer, LeakSanitizer's exit-time tracer crashes (signal 11) walking the threads of
// libgomp from the dlopen'ed oneDNN, so the exit-time leak check is skipped. Every other ASan
// and UBSan check stays on.
#include <unistd.h>

#include <cstdio>

#include "gtest/gtest.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(status);
}
