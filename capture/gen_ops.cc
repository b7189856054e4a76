// gen_ops: writes the generated part of coil's eager API from the op registry.
//
//   gen_ops <ops.inc> <tensor_methods.inc> <ops_generated.cc>
//
// Run by a genrule at build time (capture/BUILD); the outputs never enter the source tree.
// For every `aten.*` op (prims are not user API) it emits a free function in namespace coil
// (ops.inc), a method of coil::Tensor when the op's first input is `self` or `input`
// (tensor_methods.inc), and their definitions, which call capture_internal::Dispatch
// (ops_generated.cc).
//
// Naming and signature rules (the API contract; see tensor.h):
//  - `aten.add` -> `add`, `aten.add_` -> `add_` (in-place: returns the self Tensor, which
//    shares its TensorImpl with the argument).
//  - Parameters: tensor inputs in schema order (required `const Tensor&`, a variadic input
//    `const std::vector<Tensor>&`), then required attributes, then optional tensor inputs
//    (`const std::optional<Tensor>& = std::nullopt`), then attributes with defaults (C++
//    default arguments with the schema's values), then `std::source_location loc`.
//  - Attribute types: int -> int64_t, float -> double, bool -> bool, string -> std::string,
//    ints -> std::vector<int64_t>, floats -> std::vector<double>, dtype -> DType,
//    sym -> SymInt, syms -> std::vector<SymInt>.
//  - Ops whose PyTorch function returns a tuple (kMultiOutput below) return
//    std::vector<Tensor>; every other op returns its first output (max pools drop their
//    indices, like F.max_pool2d without return_indices).
//  - Clashes: a parameter or function name that is a C++ keyword gets a trailing `_`; an op
//    whose name is an existing Tensor member (size, dim, numel, item, ...) gets no method
//    (the free function remains). Names are unique per op, so no overload is ever ambiguous.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ir/io/write_file.h"
#include "ir/attribute.h"
#include "ir/op_registry.h"

namespace coil {
namespace {

const std::set<std::string>& Keywords() {
  static const auto* k = new std::set<std::string>{
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "class", "compl", "concept", "const", "consteval", "constexpr",
      "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "requires", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true",
      "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
      "volatile", "while", "xor", "xor_eq", "loc"};
  return *k;
}

// Tensor members written by hand (tensor.h): no generated method may take these names.
const std::set<std::string>& TensorMembers() {
  static const auto* k = new std::set<std::string>{
      "defined", "dtype", "device", "dim", "size", "sizes", "numel", "strides",
      "storage_offset", "is_contiguous", "is_lazy", "item", "tolist", "host", "TypeString",
      "impl", "impl_ptr", "FromHost", "FromValues", "Scalar", "Zeros", "Ones", "Rand", "Randn"};
  return *k;
}

// Ops whose PyTorch function returns a tuple / list of tensors.
const std::set<std::string>& MultiOutput() {
  static const auto* k = new std::set<std::string>{"max_dim", "min_dim", "var_mean",
                                                   "std_mean", "split", "chunk"};
  return *k;
}

std::string Ident(const std::string& name) {
  return Keywords().count(name) ? name + "_" : name;
}

std::string CppType(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int64_t";
    case AttrKind::kFloat: return "double";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "std::string";
    case AttrKind::kInts: return "std::vector<int64_t>";
    case AttrKind::kFloats: return "std::vector<double>";
    case AttrKind::kDType: return "DType";
    case AttrKind::kSym: return "SymInt";
    case AttrKind::kSyms: return "std::vector<SymInt>";
  }
  return "void";
}

std::string DoubleLiteral(double v) {
  if (std::isinf(v)) return v > 0 ? "HUGE_VAL" : "-HUGE_VAL";
  if (std::isnan(v)) return "NAN";
  // The shortest of %.15g..%.17g that reads back exactly.
  std::string s;
  for (int digits = 15; digits <= 17; ++digits) {
    s = absl::StrFormat("%.*g", digits, v);
    if (std::strtod(s.c_str(), nullptr) == v) break;
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string IntLiteral(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return absl::StrCat("int64_t{", v, "}");
}

std::string StringLiteral(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// The C++ default argument for an attribute's default value.
std::string DefaultLiteral(AttrKind kind, const Attribute& a) {
  switch (kind) {
    case AttrKind::kInt: return IntLiteral(std::get<int64_t>(a));
    case AttrKind::kFloat:
      if (const int64_t* i = std::get_if<int64_t>(&a)) return DoubleLiteral(double(*i));
      return DoubleLiteral(std::get<double>(a));
    case AttrKind::kBool: return std::get<bool>(a) ? "true" : "false";
    case AttrKind::kString: return StringLiteral(std::get<std::string>(a));
    case AttrKind::kInts: {
      std::vector<std::string> parts;
      for (int64_t v : std::get<IntList>(a)) parts.push_back(IntLiteral(v));
      return absl::StrCat("std::vector<int64_t>{", absl::StrJoin(parts, ", "), "}");
    }
    case AttrKind::kFloats: {
      std::vector<std::string> parts;
      if (const IntList* l = std::get_if<IntList>(&a)) {
        for (int64_t v : *l) parts.push_back(DoubleLiteral(double(v)));
      } else {
        for (double v : std::get<FloatList>(a)) parts.push_back(DoubleLiteral(v));
      }
      return absl::StrCat("std::vector<double>{", absl::StrJoin(parts, ", "), "}");
    }
    case AttrKind::kDType:
      return absl::StrCat("proto::", proto::DType_Name(std::get<DType>(a)));
    case AttrKind::kSym: {
      int64_t v = std::holds_alternative<int64_t>(a) ? std::get<int64_t>(a)
                                                     : std::get<SymExpr>(a).constant();
      return absl::StrCat("SymInt(", IntLiteral(v), ")");
    }
    case AttrKind::kSyms: {
      std::vector<std::string> parts;
      if (const IntList* l = std::get_if<IntList>(&a)) {
        for (int64_t v : *l) parts.push_back(absl::StrCat("SymInt(", IntLiteral(v), ")"));
      } else {
        for (const SymExpr& e : std::get<SymList>(a)) {
          parts.push_back(absl::StrCat("SymInt(", IntLiteral(e.constant()), ")"));
        }
      }
      return absl::StrCat("std::vector<SymInt>{", absl::StrJoin(parts, ", "), "}");
    }
  }
  return "{}";
}

// How an argument becomes an Attribute in the generated body.
std::string AttrValue(AttrKind kind, const std::string& var) {
  switch (kind) {
    case AttrKind::kSym: return absl::StrCat("capture_internal::SymAttr(", var, ")");
    case AttrKind::kSyms: return absl::StrCat("capture_internal::SymsAttr(", var, ")");
    default: return absl::StrCat("Attribute(", var, ")");
  }
}

struct Param {
  std::string type;     // "const Tensor&"
  std::string name;     // C++ identifier
  std::string default_; // empty: none
};

struct OpFn {
  const OpSchema* schema;
  std::string name;  // C++ function name
  std::vector<Param> params;
  // Statements building `inputs` and `attrs`.
  std::vector<std::string> body;
  bool multi = false;
  bool method = false;
};

OpFn Describe(const OpSchema& s) {
  OpFn f;
  f.schema = &s;
  std::string base = s.name.substr(s.name.find('.') + 1);
  f.name = Ident(base);
  f.multi = MultiOutput().count(base) > 0;
  std::vector<Param> required_inputs, optional_inputs, required_attrs, default_attrs;
  std::vector<std::string> input_stmts;
  for (const OpInput& in : s.inputs) {
    std::string id = Ident(in.name);
    if (in.variadic) {
      required_inputs.push_back({"const std::vector<Tensor>&", id, ""});
      input_stmts.push_back(
          absl::StrCat("inputs.insert(inputs.end(), ", id, ".begin(), ", id, ".end());"));
    } else if (in.optional) {
      optional_inputs.push_back({"const std::optional<Tensor>&", id, "std::nullopt"});
      input_stmts.push_back(absl::StrCat("capture_internal::AddOptional(inputs, ", id, ", \"",
                                         in.name, "\", missing, \"", s.name, "\", loc);"));
    } else {
      required_inputs.push_back({"const Tensor&", id, ""});
      input_stmts.push_back(absl::StrCat("inputs.push_back(", id, ");"));
    }
  }
  std::vector<std::string> attr_stmts;
  for (const AttrSpec& a : s.attrs) {
    std::string id = Ident(a.name);
    Param p{CppType(a.kind), id, ""};
    if (a.default_value.has_value()) {
      p.default_ = DefaultLiteral(a.kind, *a.default_value);
      default_attrs.push_back(p);
    } else {
      required_attrs.push_back(p);
    }
    std::string value = AttrValue(a.kind, id);
    // A float attribute whose default is a Python int (`alpha: float = 1`): the default keeps
    // its int kind, which PyTorch's promotion distinguishes (an integral add with alpha 1.0 is
    // an error, with alpha 1 it is not).
    if (a.kind == AttrKind::kFloat && a.default_value.has_value() &&
        std::holds_alternative<int64_t>(*a.default_value)) {
      int64_t d = std::get<int64_t>(*a.default_value);
      value = absl::StrCat(id, " == ", DoubleLiteral(double(d)), " ? Attribute(", IntLiteral(d),
                           ") : ", value);
    }
    attr_stmts.push_back(absl::StrCat("attrs.emplace(\"", a.name, "\", ", value, ");"));
  }
  for (auto* group : {&required_inputs, &required_attrs, &optional_inputs, &default_attrs}) {
    f.params.insert(f.params.end(), group->begin(), group->end());
  }
  f.body.push_back("std::vector<Tensor> inputs;");
  if (!optional_inputs.empty()) f.body.push_back("const char* missing = nullptr;");
  for (std::string& st : input_stmts) f.body.push_back(st);
  f.body.push_back("AttrMap attrs;");
  for (std::string& st : attr_stmts) f.body.push_back(st);
  f.method = !s.inputs.empty() && !s.inputs[0].variadic && !s.inputs[0].optional &&
             (s.inputs[0].name == "self" || s.inputs[0].name == "input") &&
             TensorMembers().count(f.name) == 0;
  return f;
}

std::string ReturnType(const OpFn& f) { return f.multi ? "std::vector<Tensor>" : "Tensor"; }

std::string ParamList(const std::vector<Param>& params, bool defaults, size_t skip) {
  std::vector<std::string> parts;
  for (size_t i = skip; i < params.size(); ++i) {
    const Param& p = params[i];
    std::string s = absl::StrCat(p.type, " ", p.name);
    if (defaults && !p.default_.empty()) absl::StrAppend(&s, " = ", p.default_);
    parts.push_back(s);
  }
  parts.push_back(defaults ? "std::source_location loc = std::source_location::current()"
                           : "std::source_location loc");
  return absl::StrJoin(parts, ", ");
}

std::string DocLine(const OpSchema& s) {
  std::string doc = s.doc.empty() ? s.name : absl::StrCat(s.name, ": ", s.doc);
  return absl::StrCat("// ", absl::StrReplaceAll(doc, {{"\n", " "}}), "\n");
}

constexpr char kBanner[] = "// Generated by capture/gen_ops.cc from the op registry. Do not edit.\n";

bool Write(const std::string& path, const std::string& text) {
  absl::Status s = WriteFileAtomically(path, text);
  if (!s.ok()) std::cerr << "gen_ops: " << s.message() << "\n";
  return s.ok();
}

int Main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: gen_ops <ops.inc> <tensor_methods.inc> <ops_generated.cc>\n";
    return 2;
  }
  std::vector<OpFn> fns;
  for (const OpSchema* s : OpRegistry::Global().All()) {
    if (s->name.rfind("aten.", 0) != 0) continue;
    fns.push_back(Describe(*s));
  }
  std::string decls = absl::StrCat(kBanner, "// Free functions, one per aten op (included by capture/tensor.h).\n",
                                   "namespace coil {\n\n");
  std::string methods = absl::StrCat(kBanner,
                                     "// Tensor methods (included inside class Tensor by "
                                     "capture/tensor.h).\n\n");
  std::string defs = absl::StrCat(kBanner,
                                  "#include <optional>\n#include <source_location>\n"
                                  "#include <string>\n#include <vector>\n\n"
                                  "#include \"capture/dispatch.h\"\n"
                                  "#include \"capture/tensor.h\"\n"
                                  "#include \"ir/attribute.h\"\n\n"
                                  "namespace coil {\n\n");
  for (const OpFn& f : fns) {
    const std::string ret = ReturnType(f);
    absl::StrAppend(&decls, DocLine(*f.schema), ret, " ", f.name, "(",
                    ParamList(f.params, true, 0), ");\n\n");
    absl::StrAppend(&defs, ret, " ", f.name, "(", ParamList(f.params, false, 0), ") {\n");
    for (const std::string& st : f.body) absl::StrAppend(&defs, "  ", st, "\n");
    if (f.multi) {
      absl::StrAppend(&defs, "  return capture_internal::Dispatch(\"", f.schema->name,
                      "\", std::move(inputs), std::move(attrs), loc);\n}\n\n");
    } else {
      absl::StrAppend(&defs, "  return capture_internal::DispatchOne(\"", f.schema->name,
                      "\", std::move(inputs), std::move(attrs), loc);\n}\n\n");
    }
    if (!f.method) continue;
    absl::StrAppend(&methods, DocLine(*f.schema), ret, " ", f.name, "(",
                    ParamList(f.params, true, 1), ") const;\n\n");
    std::vector<std::string> args = {"*this"};
    for (size_t i = 1; i < f.params.size(); ++i) args.push_back(f.params[i].name);
    args.push_back("loc");
    absl::StrAppend(&defs, ret, " Tensor::", f.name, "(", ParamList(f.params, false, 1),
                    ") const {\n  return coil::", f.name, "(", absl::StrJoin(args, ", "),
                    ");\n}\n\n");
  }
  absl::StrAppend(&decls, "}  // namespace coil\n");
  absl::StrAppend(&defs, "}  // namespace coil\n");
  if (!Write(argv[1], decls) || !Write(argv[2], methods) || !Write(argv[3], defs)) {
    std::cerr << "gen_ops: cannot write outputs\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) { return coil::Main(argc, argv); }
