// `coil decompose IN (-o OUT | --text) [--keep OPS]`: functionalize + decompose into prims.
#include "tools/coil/prims_commands.h"

#include <iostream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/printer.h"
#include "tools/coil/args.h"
#include "tools/coil/graph_io.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::cli {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "coil: " << s.message() << "\n";
  return 1;
}

std::map<std::string, int> CountOps(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node* n : g.nodes()) ++counts[n->op()];
  return counts;
}

}  // namespace

int DecomposeCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> expanded = argv;
  for (std::string& a : expanded) {
    if (a == "-o") a = "--output";
  }
  absl::StatusOr<Args> args = ParseArgs(expanded, {"output", "keep"}, {"text", "help"});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1 || (!args->values.count("output") && !args->Has("text")) ||
      args->Has("help")) {
    return Usage(
        "usage: coil decompose GRAPH (-o OUT | --text) [--keep OP,OP]\n"
        "  Functionalizes the graph (in-place ops and views become pure data flow) and\n"
        "  decomposes every aten op into prims (docs/prims.md); externs (aten.mm, aten.bmm,\n"
        "  aten.convolution) and the --keep ops stay whole. GRAPH is text IR, a binary\n"
        "  coil.proto.Graph or an .onnx model. -o writes a binary coil.proto.Graph (text IR\n"
        "  when OUT ends in .txt); --text prints text IR. A summary goes to stderr.\n",
        args->Has("help"));
  }
  absl::StatusOr<Graph> graph = LoadGraph(args->positional[0]);
  if (!graph.ok()) return Fail(graph.status());
  // The compile driver, stopped after the prims stage (the one path every compile takes).
  driver::DriverOptions options;
  options.backend = driver::ScheduleInterpreterBackend();
  options.stop_after = driver::Stage::kPrims;
  options.cache = nullptr;
  if (args->values.count("keep")) {
    for (absl::string_view op : absl::StrSplit(args->Get("keep"), ',', absl::SkipEmpty())) {
      options.decompose.keep.emplace_back(op);
    }
  }
  std::map<std::string, int> before = CountOps(*graph);
  int nodes_before = graph->num_nodes();
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(graph), options);
  if (!r.ok()) {
    return Fail(absl::Status(r.status().code(),
                             absl::StrCat(args->positional[0], ": ", r.status().message())));
  }
  graph = Graph::FromProto(*r->prims_graph);
  if (!graph.ok()) return Fail(graph.status());
  std::map<std::string, int> after = CountOps(*graph);
  std::cerr << "decomposed " << nodes_before << " nodes (" << before.size() << " ops) into "
            << graph->num_nodes() << " nodes (" << after.size() << " ops):";
  for (const auto& [op, n] : after) std::cerr << " " << op << " x" << n;
  std::cerr << "\n";
  if (args->values.count("output")) {
    std::string out = args->Get("output");
    std::string bytes = absl::EndsWith(out, ".txt") ? PrintGraph(*graph)
                                                    : graph->ToProto().SerializeAsString();
    if (absl::Status s = WriteFile(out, bytes); !s.ok()) return Fail(s);
  }
  if (args->Has("text")) std::cout << PrintGraph(*graph);
  return 0;
}

}  // namespace coil::cli
