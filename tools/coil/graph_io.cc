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
#include "ir/io/read_file.h"
#include "ir/io/write_file.h"
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
    // Straight to a Graph: no protobuf round trip (two copies of the weights fewer).
    absl::StatusOr<Graph> g = onnx::ImportOnnxFileAsGraph(path);
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

// Fills `t` with seeded values: floats uniform in [-1, 1), integers in [int_min, int_max],
// bools.
void FillRandom(HostTensor& t, std::mt19937_64& rng, int64_t int_min, int64_t int_max) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(int_min, int_max);
  const DType dtype = t.dtype();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (IsFloating(dtype)) {
      t.StoreDouble(i, real(rng));
    } else if (IsBool(dtype)) {
      t.StoreInt(i, integer(rng) & 1);  // the same draws as integer(rng) % 2 for [0, 9]
    } else {
      t.StoreInt(i, integer(rng));
    }
  }
}

}  // namespace

absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ParseDims(const Graph& graph,
                                                                    const std::string& dims) {
  absl::flat_hash_map<std::string, int64_t> values;
  for (absl::string_view item : absl::StrSplit(dims, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t v;
    // SimpleAtoi refuses "1=2" (a second '='), signs of nothing, and values past int64.
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim expects NAME=SIZE with SIZE a non-negative integer, got '", item,
                       "'"));
    }
    if (!values.emplace(std::string(kv.first), v).second) {
      return absl::InvalidArgumentError(absl::StrCat("--dim gives ", kv.first, " twice"));
    }
  }
  for (const SymbolInfo& s : graph.symbols()) {
    auto it = values.find(s.name);
    if (it == values.end()) continue;
    if (it->second < s.min || (s.max != 0 && it->second > s.max)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dim ", s.name, "=", it->second, ": symbol ", s.name, " must be in [", s.min, ", ",
          s.max == 0 ? "inf" : absl::StrCat(s.max), "]"));
    }
  }
  return values;
}

absl::StatusOr<std::vector<HostTensor>> RandomInputs(const Graph& graph, const std::string& dims,
                                                     uint64_t seed, int64_t int_min,
                                                     int64_t int_max) {
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> given = ParseDims(graph, dims);
  if (!given.ok()) return given.status();
  absl::flat_hash_map<std::string, int64_t> values;
  for (const SymbolInfo& s : graph.symbols()) {
    if (s.hint > 0) values[s.name] = s.hint;
  }
  for (const auto& [name, v] : *given) values[name] = v;
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> inputs;
  for (const Value* in : graph.inputs()) {
    auto where = [&] {
      return in->name().empty() ? absl::StrCat("input %", in->id())
                                : absl::StrCat("input '", in->name(), "' (%", in->id(), ")");
    };
    std::vector<int64_t> shape;
    for (const SymExpr& d : in->type().shape) {
      absl::StatusOr<int64_t> v = d.Evaluate(values);
      if (!v.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": ", v.status().message(), " (give sizes with --dim)"));
      }
      if (*v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(where(), ": dimension ", d.ToString(),
                                                       " evaluates to negative ", *v));
      }
      shape.push_back(*v);
    }
    // Sizes come from --dim: a size past int64 or past the memory is an error, not a crash.
    absl::StatusOr<HostTensor> t =
        HostTensor::Allocate(in->type().dtype, std::move(shape), TensorStorage::kUninitialized);
    if (!t.ok()) {
      return absl::Status(t.status().code(), absl::StrCat(where(), ": ", t.status().message()));
    }
    FillRandom(*t, rng, int_min, int_max);
    inputs.push_back(*std::move(t));
  }
  return inputs;
}

}  // namespace coil::cli
