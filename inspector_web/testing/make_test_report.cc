// make_test_report OUT.pb: writes MakeTestReport() (test_report.h), for tests that need the
// report as a file (the wasm-vs-native comparison, the page's smoke test).
#include <cstdio>
#include <fstream>

#include "inspector_web/testing/test_report.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_test_report OUT.pb\n");
    return 2;
  }
  std::ofstream out(argv[1], std::ios::binary);
  if (!out || !(out << coil::inspector::testing::MakeTestReport().SerializeAsString())) {
    std::fprintf(stderr, "make_test_report: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
