// Non-temporal ("streaming") stores for large outputs that a kernel only writes. Not an API.
//
// [Note: streaming stores] A plain store of a cache line that is not in the cache first reads
// the line from memory (read for ownership), so a pointwise kernel writing a large output
// moves 3 bytes per output byte where a copy with non-temporal stores moves 2; and the output
// evicts the inputs' lines from the caches on its way. On the 2-core AMD development machine a
// generated copy of 64 MiB ran 2x faster with non-temporal stores (docs/cpu_backend.md,
// "Streaming stores"). They lose when the data is read again soon (it is then not in the
// cache), and a partial cache line is slow to stream; so they are used only for:
//   - OUTPUT buffers (what the caller gets back; never read again by the program), that
//   - the kernel never loads (softmax's output, read back by ReuseLoopValues, is excluded),
//   - of at least kStreamingStoreBytes (a static size: outputs far beyond the L2 caches),
//   - written by whole-cache-line vector stores (64 bytes, 64-byte aligned: AVX-512), which
//     only the loop vectorizer produces, so the marking runs after the optimization pipeline.
// The kernel emitter tags the load of such a buffer's base pointer with !coil.stream and
// assumes it 64-byte aligned (runtime/cpu/kernel_abi.h: the runtime allocates OUTPUT buffers
// 64-byte aligned); MarkStreamingStores then turns every vector store through such a pointer
// that is a whole aligned cache line into a non-temporal store, and puts an sfence before the
// function returns: non-temporal stores are weakly ordered, and the thread pool's hand-off
// (release/acquire, plain moves on x86) would not otherwise order them before the caller reads.
#ifndef COIL_CODEGEN_CPU_INTERNAL_STREAMING_STORES_H_
#define COIL_CODEGEN_CPU_INTERNAL_STREAMING_STORES_H_

#include <cstdint>

#include "ir/proto/schedule.pb.h"
#include "llvm/IR/Module.h"

namespace coil::codegen_cpu_internal {

inline constexpr int64_t kStreamingStoreBytes = int64_t{4} << 20;

// The metadata kind the kernel emitter puts on a streamed buffer's base-pointer load.
inline constexpr char kStreamMetadata[] = "coil.stream";

// Marks the streaming stores of every function in `m` (after optimization); returns how many.
int MarkStreamingStores(llvm::Module& m);

// Whether `kernel`'s stores into `buf` stream past the caches: a large (kStreamingStoreBytes,
// static size) OUTPUT the kernel never loads, on a target with 64-byte vectors (`vector_bits`).
bool StreamsStores(const proto::Kernel& kernel, const proto::Buffer& buf, int vector_bits);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_STREAMING_STORES_H_
