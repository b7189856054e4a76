// CollectCompilerRemarks: LLVM's remarks and warnings are kept, not printed; errors are kept apart.
#include "codegen_cpu/internal/compiler_remarks.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"

namespace coil::codegen_cpu_internal {
namespace {

TEST(CompilerRemarksTest, RemarksAndWarningsAreCollectedNotPrinted) {
  llvm::LLVMContext context;
  std::vector<std::string> remarks, errors;
  CollectCompilerRemarks(context, &remarks, &errors);
  testing::internal::CaptureStderr();
  context.diagnose(llvm::DiagnosticInfoInlineAsm("loop not vectorized: test", llvm::DS_Remark));
  context.diagnose(llvm::DiagnosticInfoInlineAsm("something odd", llvm::DS_Warning));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(remarks.size(), 2u);
  EXPECT_EQ(remarks[0], "remark: loop not vectorized: test");
  EXPECT_EQ(remarks[1], "warning: something odd");
  EXPECT_TRUE(errors.empty());
}

TEST(CompilerRemarksTest, ErrorsAreKeptApart) {
  llvm::LLVMContext context;
  std::vector<std::string> remarks, errors;
  CollectCompilerRemarks(context, &remarks, &errors);
  context.diagnose(llvm::DiagnosticInfoInlineAsm("cannot select", llvm::DS_Error));
  EXPECT_TRUE(remarks.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "error: cannot select");
}

}  // namespace
}  // namespace coil::codegen_cpu_internal
