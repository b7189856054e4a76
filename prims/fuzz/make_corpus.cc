// Writes the seed corpus for decompose_fuzzer: aten graphs in text form (files given on the
// command line: prims/testdata, ir/fuzz/corpus, ...) converted to serialized proto::Graph
// (.pb), plus a truncated copy of each. Graphs that do not parse are skipped.
//   bazel run //prims/fuzz:make_corpus -- $PWD/prims/fuzz/corpus $PWD/prims/testdata/*[^n].txt
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "ir/io/write_file.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace {

void Write(const std::string& path, const std::string& data) {
  // Every write checked (ir/io/write_file.h): a corpus with a truncated seed is worse than none.
  if (absl::Status s = coil::WriteFileAtomically(path, data); !s.ok()) {
    std::fprintf(stderr, "make_corpus: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace coil;
  if (argc < 3) {
    std::cerr << "usage: make_corpus OUT_DIR GRAPH.txt...\n";
    return 2;
  }
  const std::string dir = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i]);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<Graph> g = ParseGraph(text.str());
    if (!g.ok()) {
      std::cerr << "skipping " << argv[i] << ": " << g.status() << "\n";
      continue;
    }
    absl::Status v = Verify(*g);
    const std::string name = std::filesystem::path(argv[i]).stem().string();
    const std::string bytes = g->ToProto().SerializeAsString();
    Write(dir + "/" + name + ".pb", bytes);
    Write(dir + "/" + name + "_truncated.pb", bytes.substr(0, bytes.size() * 2 / 3));
    std::cerr << name << ".pb: " << (v.ok() ? "verifies" : v.ToString()) << "\n";
  }
  return 0;
}
