// ParseGraph: round trips (hand-written and random graphs) and expected errors.
#include "ir/parser.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/printer.h"

namespace coil {
namespace {

using google::protobuf::util::MessageDifferencer;

// Parse(text) succeeds, prints back to exactly `text`, and survives a proto round trip.
void ExpectFixedPoint(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status() << "\n" << text;
  EXPECT_EQ(PrintGraph(*g), text);
  absl::StatusOr<Graph> again = Graph::FromProto(g->ToProto());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(PrintGraph(*again), text);
}

// Print(g) parses into a graph with the same proto and the same text.
void ExpectRoundTrip(const Graph& g) {
  std::string text = PrintGraph(g);
  absl::StatusOr<Graph> parsed = ParseGraph(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(PrintGraph(*parsed), text);
  proto::Graph want = g.ToProto();
  proto::Graph got = parsed->ToProto();
  std::string diff;
  MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(want, got)) << diff << "\n" << text;
}

TEST(ParserTest, HandWrittenGraphs) {
  ExpectFixedPoint("graph @empty() {\n  return\n}\n");
  ExpectFixedPoint(R"(graph @mlp(%0 "x": f32[s0, 4], %1 "w": f32[4, 4]) {
  symbol s0 min 2 max 0 hint 8
  guard s0 <= 4096 "batch limit" loc("model.cc":3:1)
  %2 "b": f32[2] = constant dense "0000803f000000c0"
  %3: f32[4] = constant external "w.bin" offset 64 length 16
  %4: f32[s0, 4] = aten.mm(%0, %1)
  %5: f32[s0, 4] = aten.add(%4, %3) {alpha = 1.0} name "add1" loc("model.cc":12:3 in "forward")
  %6: f32[s0], %7: i64[s0] = aten.max_dim(%5) {dim = 1, keepdim = false}
  test.print(%2)
  return %5, %6, %7
}
)");
  ExpectFixedPoint(R"(graph @"my graph"(%0 "in\tput": f64[1]{1}@cuda:0) {
  symbol "return" min 0 max 0 hint 0
  guard floordiv(a, 2) + min(a, 8) != 0
  %7 "%1": f64[1] = "constant"(%0, %0) {f = -inf, g = nan, h = floats[], "odd name" = 1, s = "\001\377"}
  "name"()
  return %7
}
)");
}

// A symbol bound by an input's value (SymbolInfo::value_of): the dropout counter's form.
TEST(ParserTest, ValueSymbols) {
  ExpectFixedPoint(R"(graph @drop(%0 "x": f32[s0, 4], %1 "rng_offset0": i64[]) {
  symbol s0 min 2 max 0 hint 8
  symbol rng_offset0 min 0 max 0 hint 0 value_of "rng_offset0"
  %2: f32[s0, 4] = aten.dropout(%0) {offset = sym(rng_offset0), p = 0.5, seed = 3, train = true}
  return %2
}
)");
}

TEST(ParserTest, AcceptsFreeFormText) {
  // Comments, extra whitespace, no return, an empty attribute list, ints in a float list.
  absl::StatusOr<Graph> g = ParseGraph(R"(
    // a comment
    graph @f ( %3 : f32 [ 2 ] ) {
      %9 : f32[2] = unknown.op ( %3 ) { } // trailing comment
      %10: f32[2] = other.op(%9) {x = floats[1, 2.5]}
    })");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g), R"(graph @f(%3: f32[2]) {
  %9: f32[2] = unknown.op(%3)
  %10: f32[2] = other.op(%9) {x = floats[1.0, 2.5]}
  return
}
)");
}

TEST(ParserTest, ExtremeNumbers) {
  ExpectFixedPoint(R"(graph @n() {
  symbol s min -9223372036854775808 max 9223372036854775807 hint -1
  %0: i64[] = test.c() {a = -9223372036854775808, b = 9223372036854775807, c = 4.94066e-324, d = -0.0, e = 1.7976931348623157e+308}
  return %0
}
)");
}

// ----- random graphs ----------------------------------------------------------------------

class RandomGraphs {
 public:
  explicit RandomGraphs(uint32_t seed) : rng_(seed) {}

  Graph Make() {
    Graph g(Pick<std::string>({"g", "main", "with space", "", "a.b_c"}));
    int num_symbols = Int(0, 3);
    for (int i = 0; i < num_symbols; ++i) {
      g.symbols().push_back(SymbolInfo{absl::StrCat("s", i), Int(0, 4), Int(0, 1) * 4096,
                                       Int(0, 16)});
    }
    for (int i = Int(0, 2); i > 0; --i) {
      g.guards().push_back(GuardInfo{
          Pick<proto::Guard::Relation>({proto::Guard::EQ, proto::Guard::NE, proto::Guard::LT,
                                        proto::Guard::LE}),
          Expr(), Expr(), Int(0, 1) ? RandomString() : "", RandomLoc()});
    }
    std::vector<Value*> values;
    for (int i = Int(0, 4); i > 0; --i) values.push_back(g.AddInput(Type(false), Name()));
    for (int i = Int(0, 3); i > 0; --i) {
      TensorType t = Type(true);
      int64_t bytes = t.NumElements().constant() * ElementSize(t.dtype);
      ConstantData d;
      if (Int(0, 3) == 0) {
        d.external_path = absl::StrCat("w", Int(0, 9), ".bin");
        d.external_offset = Int(0, 1 << 20);
        d.external_length = bytes;
      } else {
        for (int64_t k = 0; k < bytes; ++k) d.raw.push_back(static_cast<char>(Int(0, 255)));
      }
      values.push_back(g.AddConstant(t, d, Name()));
    }
    for (int i = Int(0, 25); i > 0; --i) {
      std::vector<Value*> inputs;
      for (int k = values.empty() ? 0 : Int(0, 3); k > 0; --k) {
        inputs.push_back(values[Int(0, static_cast<int>(values.size()) - 1)]);
      }
      AttrMap attrs;
      for (int k = Int(0, 4); k > 0; --k) attrs[Pick<std::string>({"a", "dim", "x y", "k"})] = Attr();
      std::vector<TensorType> types;
      for (int k = Int(0, 3); k > 0; --k) types.push_back(Type(false));
      Node* n = g.AddNode(Pick<std::string>({"aten.add", "aten.relu", "prims.exp", "x", "return",
                                             "weird op", "graph"}),
                          inputs, attrs, types);
      if (Int(0, 3) == 0) n->set_name(Name());
      if (Int(0, 2) == 0) n->set_loc(RandomLoc());
      for (Value* out : n->outputs()) {
        out->set_name(Name());
        values.push_back(out);
      }
    }
    std::vector<Value*> outputs;
    for (int k = values.empty() ? 0 : Int(0, 4); k > 0; --k) {
      outputs.push_back(values[Int(0, static_cast<int>(values.size()) - 1)]);
    }
    g.SetOutputs(outputs);
    return g;
  }

 private:
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  template <typename T>
  T Pick(std::vector<T> options) { return options[Int(0, static_cast<int>(options.size()) - 1)]; }

  std::string RandomString() {
    std::string s;
    for (int i = Int(0, 8); i > 0; --i) {
      s.push_back(Int(0, 3) == 0 ? static_cast<char>(Int(0, 255)) : static_cast<char>(Int('a', 'z')));
    }
    return s;
  }
  std::string Name() { return Int(0, 2) == 0 ? RandomString() : ""; }

  SourceLoc RandomLoc() {
    return SourceLoc{RandomString(), static_cast<int32_t>(Int(0, 1000)),
                     static_cast<int32_t>(Int(0, 80)), Int(0, 1) ? RandomString() : ""};
  }

  SymExpr Expr(int depth = 0) {
    if (depth > 3) return Int(0, 1) ? SymExpr(Int(0, 9)) : SymExpr::Symbol("s0");
    auto Expr = [&]() { return this->Expr(depth + 1); };
    switch (Int(0, 6)) {
      case 0: return Int(0, 100);
      case 1: return SymExpr::Symbol(absl::StrCat("s", Int(0, 2)));
      case 2: return Expr() + Expr();
      case 3: return Expr() * Int(1, 5);
      case 4: return SymExpr::FloorDiv(Expr(), Int(1, 4));
      case 5: return SymExpr::Min(Expr(), Expr());
      default: return SymExpr::Mod(Expr(), Int(2, 4)) - Int(0, 3);
    }
  }

  TensorType Type(bool static_shape) {
    TensorType t;
    t.dtype = Pick<DType>({proto::FLOAT32, proto::FLOAT64, proto::FLOAT16, proto::BFLOAT16,
                           proto::INT64, proto::INT32, proto::INT8, proto::UINT8, proto::BOOL});
    for (int i = Int(0, 3); i > 0; --i) {
      SymExpr d = static_shape || Int(0, 1) ? SymExpr(Int(0, 4)) : Expr();
      t.shape.push_back(d.is_constant() && d.constant() < 0 ? SymExpr(0) : d);
    }
    if (Int(0, 3) == 0) {
      for (size_t i = 0; i < t.shape.size(); ++i) {
        t.strides.push_back(static_shape ? SymExpr(Int(0, 9)) : Expr());
      }
    }
    if (Int(0, 3) == 0) t.device = Device{Pick<proto::Device::Kind>({proto::Device::CPU, proto::Device::CUDA}),
                                          static_cast<int32_t>(Int(0, 3))};
    return t;
  }

  double Double() {
    switch (Int(0, 4)) {
      case 0: return static_cast<double>(Int(-5, 5));
      case 1: return Pick<double>({std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(), -0.0,
                                   std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::max()});
      default: {
        double d;
        do {
          uint64_t bits = (static_cast<uint64_t>(rng_()) << 32) | rng_();
          std::memcpy(&d, &bits, sizeof(d));
        } while (std::isnan(d));
        return d;
      }
    }
  }

  Attribute Attr() {
    switch (Int(0, 8)) {
      case 0: return Attribute(Pick<int64_t>({0, -1, 7, INT64_MIN, INT64_MAX}));
      case 1: return Attribute(Double());
      case 2: return Attribute(Int(0, 1) == 1);
      case 3: return Attribute(RandomString());
      case 4: {
        IntList v;
        for (int i = Int(0, 4); i > 0; --i) v.push_back(Int(-100, 100));
        return Attribute(v);
      }
      case 5: {
        FloatList v;
        for (int i = Int(0, 4); i > 0; --i) v.push_back(Double());
        return Attribute(v);
      }
      case 6: return Attribute(Pick<DType>({proto::FLOAT32, proto::BOOL, proto::DTYPE_UNSPECIFIED}));
      case 7: return Attribute(Expr());
      default: {
        SymList v;
        for (int i = Int(0, 3); i > 0; --i) v.push_back(Expr());
        return Attribute(v);
      }
    }
  }

  std::mt19937 rng_;
};

TEST(ParserTest, RandomGraphsRoundTrip) {
  for (uint32_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Graph g = RandomGraphs(seed).Make();
    ExpectRoundTrip(g);
    if (HasFatalFailure()) return;
  }
}

// ----- errors -----------------------------------------------------------------------------

struct ErrorCase {
  const char* text;
  const char* message;
};

TEST(ParserTest, Errors) {
  const ErrorCase cases[] = {
      {"", "1:1: expected 'graph' at the start, found the end of the input"},
      {"graf @g() {}", "1:1: expected 'graph' at the start, found 'graf'"},
      {"graph @g(%0: f32[2] %1", "1:21: expected ',' or ')' after the inputs, found '%1'"},
      {"graph @g() {\n  %1: f32[] = aten.relu(%0)\n}", "2:25: undefined value %0"},
      {"graph @g(%0: f32[]) {\n  %0: f32[] = aten.relu(%0)\n}",
       "2:3: value %0 is defined more than once"},
      {"graph @g(%0: f32[], %1: f31[2]) {}", "1:25: unknown dtype 'f31'"},
      {"graph @g(%0: f32[]) {\n  %1: f32[], %1: f32[] = x(%0)\n}",
       "2:14: value %1 is defined more than once"},
      {"graph @g(%0: f32[]) {\n  %1: f32[] = x(%1)\n}", "2:17: undefined value %1"},
      {"graph @\"g() {}", "1:8: unterminated string"},
      {"graph @g() { $ }", "1:14: unexpected character '$'"},
      {"graph @g(%0: f32[s0 +]) {}",
       "1:18: cannot parse symbolic expression \"s0 +\" at position 4: expected an integer, a "
       "symbol, a function call or '(', found the end of the input"},
      {"graph @g() {\n  %0: f32[2] = constant dense \"0000\"\n}",
       "2:3: constant %0 of type f32[2] needs 8 bytes, has 2"},
      {"graph @g() {\n  %0: f32[s] = constant external \"w\" offset 0 length 4\n}",
       "2:3: constant %0 has a symbolic type"},
      {"graph @g() {\n  %0: u8[4] = constant external \"/etc/passwd\" offset 0 length 4\n}",
       "2:33: external data path '/etc/passwd' must be relative to the model's folder"},
      {"graph @g() {\n  %0: u8[4] = constant external \"../../etc/passwd\" offset 0 length 4\n}",
       "2:33: external data path '../../etc/passwd' must not contain '..' (it would leave the "
       "model's folder)"},
      {"graph @g() {\n  %0: u8[1] = constant dense \"0g\"\n}",
       "2:30: constant bytes must be hex digits"},
      {"graph @g() {\n  %0: f32[] = x() {a = 1, a = 2}\n}", "2:27: attribute 'a' given twice"},
      {"graph @g() {\n  %0: f32[] = x() {a = f33}\n}",
       "2:24: unknown dtype 'f33' (or attribute value)"},
      {"graph @g() {\n  %0: f32[] = x() {a = 99999999999999999999}\n}",
       "2:24: integer out of the int64 range"},
      {"graph @g(%0: f32[]) {\n  return %0\n  x(%0)\n}", "3:3: expected '}' after 'return', found 'x'"},
      {"graph @g() {} extra", "1:15: expected the end of the input after '}', found 'extra'"},
      {"graph @g(%0: f32[-1]) {}", "1:18: dimension 0 is negative: -1"},
      {"graph @g(%99999999999999999999: f32[]) {}", "1:10: value id out of the int64 range"},
      {"graph @g() {\n  guard s0 s1\n}", "2:12: expected '==', '!=', '<' or '<=', found 's1'"},
      {"graph @g(%0: f32[2, 3]{1}) {}", "1:23: 1 strides for rank 2"},
      {"graph @g(%0: f32[2]@tpu:0) {}", "1:21: expected a device ('cpu' or 'cuda') after '@', found 'tpu'"},
      {"graph @g() {\n  %0: f32[] = x() loc(\"f\":1)\n}",
       "2:28: expected ':' after the line number, found ')'"},
      {"graph @g() {\n  %0: f32[], %1: f32[] = constant dense \"\"\n}",
       "2:3: a constant defines exactly one value"},
      {"graph @g() {\n  %0: f32[] = x(\n}", "3:1: expected a value (%id), found '}'"},
      {"graph @g(%0: f32[]) {\n  %1: f32[] = x(%0 %0)\n}",
       "2:20: expected ',' or ')' after the operands, found '%0'"},
      {"graph @g() { symbol \"\" min 0 max 0 hint 0 }", "1:14: symbol with an empty name"},
      {"graph @g() {\n  %0: f32[] = x() {s = \"\\q\"}\n}", "2:24: invalid escape in string: "},
      {"graph @g() { % }", "1:14: expected a value id (digits) after '%'"},
      {"graph @g(%0: f32[(a+b+c+d+e+f+g+h+i)*(a+b+c+d+e+f+g+h+i)*(a+b+c+d+e+f+g+h+i)*(a+b+c+d+e+f+g+h+i)]) {}",
       "1:18: symbolic expression too large: its expansion could have more than 4096 terms"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<Graph> g = ParseGraph(c.text);
    ASSERT_FALSE(g.ok()) << c.text;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(g.status().message(), c.message))
        << "text:\n" << c.text << "\nwant: " << c.message << "\ngot:  " << g.status().message();
  }
}

TEST(ParserTest, AcceptsUnknownOps) {
  absl::StatusOr<Graph> g =
      ParseGraph("graph @g(%0: f32[]) {\n  %1: f32[] = no.such.op(%0)\n  return %1\n}");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->nodes()[0]->op(), "no.such.op");
}

// Every strict prefix of a printed graph lacks at least the closing brace: each must be refused
// with a positioned error (and never crash); the whole text parses.
TEST(ParserTest, TruncationsAreRefusedWithAPosition) {
  std::string text = PrintGraph(RandomGraphs(7).Make());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  ASSERT_EQ(text.back(), '}');
  for (size_t n = 0; n < text.size(); ++n) {
    absl::StatusOr<Graph> g = ParseGraph(text.substr(0, n));
    ASSERT_FALSE(g.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << n;
    EXPECT_TRUE(std::regex_search(std::string(g.status().message()), std::regex("[0-9]+:[0-9]+")))
        << n << ": " << g.status().message();
  }
  EXPECT_TRUE(ParseGraph(text).ok());
}

}  // namespace
}  // namespace coil
