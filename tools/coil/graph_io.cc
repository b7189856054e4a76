// Graph file loading for the CLI.
#include "tools/coil/graph_io.h"

#include <random>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "capture/onnx/onnx_importer.h"
#include "io/read_file.h"
#include "io/write_file.h"
#include "ir/parser.h"

namespace coil::cli {

absl::StatusOr<std::string> ReadFile(const std::string& path) { return ReadInputFile(path); }

absl::Status WriteFile(const std::string& path, const std::string& bytes) {
  return WriteFileAtomically(path, bytes);
}

namespace {

bool LooksLikeText(absl::string_view bytes) {
  while (true) {
    bytes = absl::StripLeadingAsciiWhitespace(bytes);
    if (absl::StartsWith(bytes, "//") || absl::StartsWith(bytes, "#")) {
      size_t nl = bytes.find('\n');
      if (nl == absl::string_view::npos) return false;
      bytes.remove_prefix(nl + 1);
      continue;
    }
    return absl::StartsWith(bytes, "graph");
  }
}

}  // namespace

absl::StatusOr<Graph> LoadGraph(const std::string& path) {
  if (absl::EndsWith(path, ".onnx")) {
    absl::StatusOr<proto::Graph> imported = onnx::ImportOnnxFile(path);
    if (!imported.ok()) {
      return absl::Status(imported.status().code(),
                          absl::StrCat(path, ": ", imported.status().message()));
    }
    absl::StatusOr<Graph> g = Graph::FromProto(*imported);
    if (!g.ok()) {
      return absl::Status(g.status().code(), absl::StrCat(path, ": ", g.status().message()));
    }
    return g;
  }
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  if (bytes->empty()) {
    // An empty proto parses as an empty graph: say what happened instead of "ok (0 nodes)".
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the file is empty (neither text IR nor a serialized coil.proto.Graph)"));
  }
  if (LooksLikeText(*bytes)) {
    absl::StatusOr<Graph> g = ParseGraph(*bytes);
    if (!g.ok()) {
      return absl::Status(g.status().code(), absl::StrCat(path, ":", g.status().message()));
    }
    return g;
  }
  proto::Graph p;
  if (!p.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": neither text IR nor a serialized coil.proto.Graph"));
  }
  absl::StatusOr<Graph> g = Graph::FromProto(p);
  if (!g.ok()) {
    return absl::Status(g.status().code(), absl::StrCat(path, ": ", g.status().message()));
  }
  return g;
}

namespace {

HostTensor RandomTensor(DType dtype, std::vector<int64_t> shape, std::mt19937_64& rng) {
  HostTensor t = HostTensor::Zeros(dtype, std::move(shape));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, 9);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (IsFloating(dtype)) {
      t.StoreDouble(i, real(rng));
    } else if (IsBool(dtype)) {
      t.StoreInt(i, integer(rng) % 2);
    } else {
      t.StoreInt(i, integer(rng));
    }
  }
  return t;
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> RandomInputs(const Graph& graph, const std::string& dims,
                                                     uint64_t seed) {
  absl::flat_hash_map<std::string, int64_t> values;
  for (const SymbolInfo& s : graph.symbols()) {
    if (s.hint > 0) values[s.name] = s.hint;
  }
  for (absl::string_view item : absl::StrSplit(dims, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, '=');
    int64_t v;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--dim expects NAME=SIZE, got '", item, "'"));
    }
    values[kv.first] = v;
  }
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> inputs;
  for (const Value* in : graph.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : in->type().shape) {
      absl::StatusOr<int64_t> v = d.Evaluate(values);
      if (!v.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", in->name(), "': ", v.status().message(), " (give sizes with --dim)"));
      }
      shape.push_back(*v);
    }
    inputs.push_back(RandomTensor(in->type().dtype, shape, rng));
  }
  return inputs;
}

}  // namespace coil::cli
