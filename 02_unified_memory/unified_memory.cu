// Chapter 02: where the data lives, and what moving it costs.
//
// main() checks the command line and the sizes, asks the device what it supports for
// managed memory, and then runs the lesson's three parts (declared in parts.cuh):
//   1. the add of chapter 01 five ways: managed memory on first touch, prefetched, and
//      advised to stay in host memory; explicit copies from pageable and from pinned
//      memory (add_five_ways.cu);
//   2. read-mostly advice for an input that the CPU and the GPU both read (read_mostly.cu);
//   3. the bandwidth of each way of moving data between host and GPU (bandwidth.cu).
#include <cstdio>

#include <tutorial/check.cuh>
#include <tutorial/cli.hpp>
#include <tutorial/device.cuh>
#include <tutorial/verify.hpp>

#include "memory_kinds.cuh"
#include "parts.cuh"

// ---------------------------------------------------------------------------
// What the device says about managed memory

struct ManagedMemorySupport {
  bool concurrent_access = false;  // the GPU can page-fault on managed memory
  bool pageable_access = false;    // kernels can use malloc/new memory
};

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

ManagedMemorySupport describe_managed_memory(int device) {
  ManagedMemorySupport s;
  s.concurrent_access = device_attribute(cudaDevAttrConcurrentManagedAccess, device) != 0;
  s.pageable_access = device_attribute(cudaDevAttrPageableMemoryAccess, device) != 0;
  const int host_page_tables =
      device_attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables, device);
  const int host_reads_in_place = device_attribute(cudaDevAttrDirectManagedMemAccessFromHost, device);

  std::printf("\nManaged memory on this device (cudaDeviceGetAttribute):\n");
  std::printf("  concurrentManagedAccess = %d: %s\n", s.concurrent_access,
              s.concurrent_access
                  ? "the GPU can page-fault, so managed pages migrate on demand to whichever "
                    "processor touches them, and prefetch and advice work. The CPU may touch "
                    "managed memory while kernels run, but must synchronize before it reads "
                    "their results."
                  : "no GPU page faults (Windows, WSL, pre-Pascal GPUs): every launch first "
                    "moves all managed memory to the GPU, and the CPU must not touch managed "
                    "memory until the GPU is idle. Prefetch and advice need page faults, so "
                    "the parts that use them are skipped.");
  std::printf("  pageableMemoryAccess = %d: %s\n", s.pageable_access,
              s.pageable_access
                  ? "kernels can also use ordinary host memory from malloc/new (HMM on Linux "
                    "with NVIDIA's open kernel modules, or ATS on Grace Hopper)."
                  : "kernels can use only cudaMalloc, managed and pinned memory: a pointer "
                    "from malloc/new handed to a kernel is an illegal address.");
  std::printf("  pageableMemoryAccessUsesHostPageTables = %d: %s\n", host_page_tables,
              host_page_tables ? "the GPU reads the CPU's page tables in hardware (ATS)."
                               : "no hardware translation through the CPU's page tables.");
  std::printf("  directManagedMemAccessFromHost = %d: %s\n", host_reads_in_place,
              host_reads_in_place
                  ? "the CPU reads managed pages in GPU memory in place, without migrating them."
                  : "a CPU access to a managed page in GPU memory migrates the page back to "
                    "host memory (a CPU page fault).");
  return s;
}

// ---------------------------------------------------------------------------

int main(int argc, char** argv) {
  tutorial::Cli cli("02_unified_memory",
                    "The same add (y = x + y) with managed memory (first touch, prefetched, "
                    "advised) and with explicit copies\nfrom pageable and pinned memory, each "
                    "verified and timed; then read-mostly advice and host<->GPU bandwidth.");
  cli.add_int("n", "elements of x and y in the add", 1 << 20, 1, 1LL << 35);
  cli.add_int("transfer-n", "floats moved in the bandwidth test", 1 << 26, 1, 1LL << 35);
  cli.add_int("runs", "timed runs per measurement (the median is shown)", 20, 1, 1000);
  cli.parse_or_exit(argc, argv);
  const size_t n = static_cast<size_t>(cli.get_int("n"));
  const size_t transfer_n = static_cast<size_t>(cli.get_int("transfer-n"));
  const int runs = static_cast<int>(cli.get_int("runs"));
  const size_t bytes = n * sizeof(float);
  const size_t transfer_bytes = transfer_n * sizeof(float);

  const tutorial::DeviceInfo gpu = tutorial::require_gpu();
  // Check every size before allocating anything. Managed memory is not limited by the
  // GPU's memory: more than is free oversubscribes the GPU, and pages are evicted and
  // faulted back in, endlessly. That can stall the GPU for minutes, so it is refused.
  tutorial::require_device_memory(2 * bytes, "The add (x and y, --n floats each)");
  tutorial::require_device_memory(2 * transfer_bytes,
                                  "The bandwidth test (two buffers of --transfer-n floats)");
  chapter02::require_host_memory(2 * bytes, "The add (x and y, --n floats each)");
  chapter02::require_host_memory(transfer_bytes, "The bandwidth test (--transfer-n floats)");

  const ManagedMemorySupport support = describe_managed_memory(gpu.id);
  tutorial::Verifier verifier;
  chapter02::add_five_ways(n, runs, gpu.id, support.concurrent_access, verifier);
  if (support.concurrent_access) chapter02::read_mostly_rounds(n, runs, gpu.id, verifier);
  chapter02::host_gpu_bandwidth(transfer_n, runs, gpu.id, support.concurrent_access, verifier);
  return verifier.finish("02_unified_memory");
}
