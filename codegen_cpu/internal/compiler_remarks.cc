// CollectCompilerRemarks (compiler_remarks.h): an llvm::DiagnosticHandler that keeps the text.
#include "codegen_cpu/internal/compiler_remarks.h"

#include <memory>

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/Support/raw_ostream.h"

namespace coil::codegen_cpu_internal {
namespace {

class CollectingHandler : public llvm::DiagnosticHandler {
 public:
  CollectingHandler(std::vector<std::string>* remarks, std::vector<std::string>* errors)
      : remarks_(remarks), errors_(errors) {}

  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    os << llvm::LLVMContext::getDiagnosticMessagePrefix(info.getSeverity()) << ": ";
    info.print(printer);
    os.flush();
    (info.getSeverity() == llvm::DS_Error ? errors_ : remarks_)->push_back(std::move(text));
    return true;  // handled: LLVM prints nothing
  }

  // Only the remarks LLVM would print on its own (forced-vectorization failures and the like)
  // are produced; asking for every pass's remarks would slow compiles down.
  bool isAnalysisRemarkEnabled(llvm::StringRef) const override { return false; }
  bool isMissedOptRemarkEnabled(llvm::StringRef) const override { return false; }
  bool isPassedOptRemarkEnabled(llvm::StringRef) const override { return false; }

 private:
  std::vector<std::string>* remarks_;
  std::vector<std::string>* errors_;
};

}  // namespace

void CollectCompilerRemarks(llvm::LLVMContext& context, std::vector<std::string>* remarks,
                            std::vector<std::string>* errors) {
  context.setDiagnosticHandler(std::make_unique<CollectingHandler>(remarks, errors));
}

}  // namespace coil::codegen_cpu_internal
