// The AOT descriptor in LLVM IR: private data (strings, the schedule blob, the kernel table)
// and one external constant whose layout mirrors CoilAotPackage field by field.
#include "codegen_cpu/internal/aot_descriptor.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "runtime/cpu/aot_package.h"

namespace coil::codegen_cpu_internal {
namespace {

// Definitions become local symbols: only the descriptor is reachable from outside the object.
// Special globals (llvm.used, llvm.global_ctors, ...) keep their required linkage.
void Internalize(llvm::Module& module) {
  for (llvm::Function& f : module.functions()) {
    if (!f.isDeclaration() && !f.isIntrinsic()) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  for (llvm::GlobalVariable& g : module.globals()) {
    if (!g.isDeclaration() && !g.getName().startswith("llvm.")) {
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }
  for (llvm::GlobalAlias& a : module.aliases()) a.setLinkage(llvm::GlobalValue::InternalLinkage);
}

// A private, NUL-terminated string constant; returns its address.
llvm::Constant* CString(llvm::Module& module, const std::string& text, const std::string& name) {
  llvm::Constant* data = llvm::ConstantDataArray::getString(module.getContext(), text, true);
  auto* g = new llvm::GlobalVariable(module, data->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, data, name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  g->setAlignment(llvm::Align(1));
  return g;
}

}  // namespace

std::string AotPackageSymbol(const std::string& name) {
  return absl::StrCat(cpu::kAotSymbolPrefix, name, cpu::kAotSymbolSuffix);
}

absl::Status AddAotDescriptor(llvm::Module& module, const proto::KernelModule& kernels,
                              const AotDescriptor& d) {
  const std::string symbol = AotPackageSymbol(d.name);
  if (module.getNamedValue(symbol) != nullptr) {
    return absl::InternalError(absl::StrCat("the kernel module already defines ", symbol));
  }
  // Static constructors would run at program start, before CheckAotPackage: on a CPU without
  // the package's features that could be SIGILL instead of a clear error.
  for (const char* special : {"llvm.global_ctors", "llvm.global_dtors"}) {
    if (module.getNamedValue(special) != nullptr) {
      return absl::InternalError(absl::StrCat(
          "the kernel module has ", special, ": AOT objects must not run code at load time"));
    }
  }
  Internalize(module);

  llvm::LLVMContext& ctx = module.getContext();
  llvm::IntegerType* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::PointerType* ptr = llvm::PointerType::get(ctx, 0);
  const std::string prefix = absl::StrCat("coil_aot.", d.name, ".");

  // The kernel table, sorted by kernel id: {i64 kernel_id, ptr fn, ptr symbol}.
  std::vector<const proto::CompiledKernel*> sorted;
  for (const proto::CompiledKernel& k : kernels.kernels()) sorted.push_back(&k);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->kernel_id() < b->kernel_id();
  });
  llvm::StructType* kernel_type = llvm::StructType::create(ctx, {i64, ptr, ptr}, "CoilAotKernel");
  std::vector<llvm::Constant*> rows;
  for (const proto::CompiledKernel* k : sorted) {
    llvm::Function* fn = module.getFunction(k->symbol());
    if (fn == nullptr || fn->isDeclaration()) {
      return absl::InternalError(absl::StrCat("kernel ", k->kernel_id(), " '", k->name(),
                                              "': no function ", k->symbol(), " in the module"));
    }
    rows.push_back(llvm::ConstantStruct::get(
        kernel_type, {llvm::ConstantInt::get(i64, k->kernel_id()), fn,
                      CString(module, k->symbol(), prefix + "symbol")}));
  }
  llvm::Constant* table = llvm::ConstantPointerNull::get(ptr);
  if (!rows.empty()) {
    llvm::ArrayType* table_type = llvm::ArrayType::get(kernel_type, rows.size());
    auto* g = new llvm::GlobalVariable(module, table_type, /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage,
                                       llvm::ConstantArray::get(table_type, rows),
                                       prefix + "kernels");
    g->setAlignment(llvm::Align(8));
    table = g;
  }

  // The schedule blob (no NUL: its size is in the descriptor).
  llvm::Constant* blob_data =
      llvm::ConstantDataArray::getString(ctx, d.schedule_bytes, /*AddNull=*/false);
  auto* blob = new llvm::GlobalVariable(module, blob_data->getType(), /*isConstant=*/true,
                                        llvm::GlobalValue::PrivateLinkage, blob_data,
                                        prefix + "schedule");
  blob->setAlignment(llvm::Align(16));

  // CoilAotPackage, field by field (runtime/cpu/aot_package.h).
  llvm::StructType* package_type = llvm::StructType::create(
      ctx, {i64, i64, ptr, ptr, ptr, ptr, ptr, ptr, ptr, i64, ptr, i64}, "CoilAotPackage");
  static_assert(sizeof(CoilAotPackage) == 12 * 8, "CoilAotPackage changed: update this IR");
  llvm::Constant* fields[] = {
      llvm::ConstantInt::get(i64, cpu::kAotMagic),
      llvm::ConstantInt::get(i64, cpu::kAotAbiVersion),
      CString(module, d.name, prefix + "name"),
      CString(module, module.getTargetTriple(), prefix + "triple"),
      CString(module, d.cpu, prefix + "cpu"),
      CString(module, d.cpu_features, prefix + "cpu_features"),
      CString(module, d.compiler, prefix + "compiler"),
      CString(module, d.options, prefix + "options"),
      blob,
      llvm::ConstantInt::get(i64, d.schedule_bytes.size()),
      table,
      llvm::ConstantInt::get(i64, rows.size()),
  };
  auto* package = new llvm::GlobalVariable(module, package_type, /*isConstant=*/true,
                                           llvm::GlobalValue::ExternalLinkage,
                                           llvm::ConstantStruct::get(package_type, fields),
                                           symbol);
  package->setAlignment(llvm::Align(8));
  return absl::OkStatus();
}

}  // namespace coil::codegen_cpu_internal
