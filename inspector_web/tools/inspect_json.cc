// inspect_json: the inspector core natively, for debugging the page's data and timing the core.
//
//   inspect_json FILE                 the overview JSON (what coil_open returns)
//   inspect_json FILE --stage N       stage N's JSON (coil_stage)
//   inspect_json FILE --time          per-step wall times for every stage, no JSON
//   inspect_json FILE --all           one document per line: the overview, then for each stage
//                                     i its JSON, the diff (i-1, i), each node's details and
//                                     its memory plan at "", "s0=7" and "s0=x"; then the
//                                     compare document before a compare file, the file
//                                     opened as its own compare file and the comparison;
//                                     what the wasm module must reproduce byte for byte
//                                     (testing/wasm_native_test.sh)
// Exit status 1 when the file does not load (the error JSON is still printed).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "inspector_web/core/inspector.h"

namespace {

double Ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int Usage() {
  std::fprintf(stderr, "usage: inspect_json FILE [--stage N | --time | --all]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "inspect_json: cannot read %s\n", argv[1]);
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = buffer.str();
  std::string name = argv[1];
  if (size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);

  coil::inspector::Inspector inspector;
  auto t0 = std::chrono::steady_clock::now();
  std::string overview = inspector.Open(bytes, name);
  double open_ms = Ms(t0);
  bool ok = overview.rfind("{\"ok\":true", 0) == 0;
  if (argc == 2 || (argc == 3 && std::strcmp(argv[2], "--all") == 0)) {
    std::printf("%s\n", overview.c_str());
    if (argc == 3) {
      for (size_t i = 0; i < inspector.stages().size(); ++i) {
        int stage = static_cast<int>(i);
        std::printf("%s\n", inspector.StageJson(stage).c_str());
        std::printf("%s\n", inspector.DiffJson(stage == 0 ? 0 : stage - 1, stage).c_str());
        for (int n = 0; n < inspector.stages()[i].graph->nodes_size(); ++n) {
          std::printf("%s\n", inspector.NodeJson(stage, n).c_str());
        }
        for (const char* typed : {"", "s0=7", "s0=x"}) {
          std::printf("%s\n", inspector.MemoryJson(stage, typed).c_str());
        }
      }
      std::printf("%s\n", inspector.CompareJson().c_str());
      std::printf("%s\n", inspector.OpenCompare(bytes, name).c_str());
      std::printf("%s\n", inspector.CompareJson().c_str());
    }
    return ok ? 0 : 1;
  }
  if (!ok) {
    std::printf("%s\n", overview.c_str());
    return 1;
  }
  if (std::strcmp(argv[2], "--stage") == 0 && argc == 4) {
    std::printf("%s\n", inspector.StageJson(std::atoi(argv[3])).c_str());
    return 0;
  }
  if (std::strcmp(argv[2], "--time") != 0) return Usage();
  std::printf("open %s (%zu bytes): %.1f ms\n", name.c_str(), bytes.size(), open_ms);
  for (size_t i = 0; i < inspector.stages().size(); ++i) {
    t0 = std::chrono::steady_clock::now();
    std::string json = inspector.StageJson(static_cast<int>(i));
    std::printf("stage %zu %s: %d nodes, %.1f ms, %zu bytes of JSON\n", i,
                inspector.stages()[i].key.c_str(), inspector.stages()[i].graph->nodes_size(),
                Ms(t0), json.size());
  }
  return 0;
}
