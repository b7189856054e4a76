// COIL_CHECK: internal invariants. A failed check is a compiler bug, never a user error
// (user errors are absl::Status). It prints where and what, then aborts.
//
//   COIL_CHECK(node->outputs().size() == 1) << "op " << node->op();
#ifndef COIL_IR_CHECK_H_
#define COIL_IR_CHECK_H_

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace coil::check_internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": internal error (coil bug): check failed: " << condition
            << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `COIL_CHECK(c) << x` parse as a void expression in both arms of ?:.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace coil::check_internal

#define COIL_CHECK(condition)                                    \
  (condition) ? (void)0                                          \
              : ::coil::check_internal::Voidify() &              \
                    ::coil::check_internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#endif  // COIL_IR_CHECK_H_
