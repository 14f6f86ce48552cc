// Chapter 08, part 5: one process per GPU, as real jobs run, started by a launcher of our own.
//
// The launcher (this program's parent process) never touches CUDA: a process that has used
// CUDA cannot fork children that use it. A first child counts the GPUs; then one child per
// GPU starts, rank 0 makes NCCL's unique id and passes it to the others through pipes, and
// every child joins the communicator with ncclCommInitRank, runs the same exact all-reduce
// as 08_allreduce, checks its own answer, times it, and sends its numbers back up a pipe.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <tutorial/cli.hpp>
#include <tutorial/timer.cuh>

#include "multi_gpu.cuh"
#include "nccl_check.hpp"

namespace {

constexpr size_t kCounts[] = {1024, 262144, 16777216, 1000003};  // 4 KiB, 1 MiB, 64 MiB, an odd count
constexpr int kSizes = sizeof(kCounts) / sizeof(kCounts[0]);

struct Result {  // what each child sends up its pipe
  double max_error[kSizes];
  double median_ms[kSizes];
};

void write_all(int fd, const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t done = write(fd, p, bytes);
    if (done <= 0) std::exit(tutorial::kExitFailure);
    p += done;
    bytes -= size_t(done);
  }
}
bool read_all(int fd, void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t done = read(fd, p, bytes);
    if (done <= 0) return false;
    p += done;
    bytes -= size_t(done);
  }
  return true;
}

// [excerpt:rank]
/// One child: GPU `rank` of `world`. The unique id comes from rank 0, through a pipe.
int run_rank(int rank, int world, int id_in, const std::vector<int>& id_out, int result_out, int runs) {
  // [excerpt:unique-id]
  ncclUniqueId id;
  if (rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));  // an address for the others to find rank 0
    for (int fd : id_out) write_all(fd, &id, sizeof id);
  } else if (!read_all(id_in, &id, sizeof id)) {
    return tutorial::kExitFailure;
  }
  CUDA_CHECK(cudaSetDevice(rank));
  if (rank == 0) multi_gpu::require_matching_nccl();
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, world, id, rank));  // waits until all `world` ranks join
  // [/excerpt:unique-id]
  // [/excerpt:rank]
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Result result{};
  for (int s = 0; s < kSizes; ++s) {
    const size_t n = kCounts[s];
    std::vector<float> host(n), expected(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      host[i] = multi_gpu::exact_input(rank, i);
      for (int r = 0; r < world; ++r) expected[i] += multi_gpu::exact_input(r, i);
    }
    multi_gpu::GpuArray<float> in(rank, n), out(rank, n);
    in.upload(host);
    out.poison();
    auto all_reduce = [&] { NCCL_CHECK(ncclAllReduce(in.data(), out.data(), n, ncclFloat, ncclSum, comm, stream)); };
    all_reduce();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    NCCL_CHECK_ASYNC(comm);
    const std::vector<float> got = out.download();
    result.max_error[s] = tutorial::max_abs_error(got.data(), expected.data(), n);
    // Each process enqueues only its own GPU's work, so back-to-back runs keep the GPU busy.
    result.median_ms[s] = tutorial::time_gpu(all_reduce, {3, runs}, stream).median_ms;
    NCCL_CHECK_ASYNC(comm);
  }
  write_all(result_out, &result, sizeof result);
  CUDA_CHECK(cudaStreamDestroy(stream));
  NCCL_CHECK(ncclCommDestroy(comm));
  return 0;
}

/// Counts the GPUs in a child, so that this process never initializes CUDA. Exits like
/// multi_gpu::require_gpus (77 with fewer than two) if the child did.
int count_gpus() {
  int fds[2];
  if (pipe(fds) != 0) std::exit(tutorial::kExitFailure);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const int count = multi_gpu::require_gpus();
    write_all(fds[1], &count, sizeof count);
    std::fflush(stdout);  // _exit skips stdio's buffers
    _exit(0);
  }
  close(fds[1]);
  int count = 0, status = 0;
  const bool got = read_all(fds[0], &count, sizeof count);
  close(fds[0]);
  waitpid(pid, &status, 0);
  if (!got) std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : tutorial::kExitFailure);
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  tutorial::Cli cli("08_process_per_gpu", "One process per GPU, started by fork, sharing NCCL's unique id "
                                          "through pipes: the same exact all-reduce as 08_allreduce.");
  cli.add_int("runs", "timed runs per size (the median is reported)", 20, 1, 1000);
  cli.add_int("timeout", "seconds to wait for the children before stopping them", 120, 1, 3600);
  cli.add_flag("nccl-debug", "set NCCL_DEBUG=INFO in the children: NCCL says which transport it chose");
  cli.parse_or_exit(argc, argv);
  multi_gpu::force_nvls_off();  // set before fork: every child inherits it
  if (cli.get_flag("nccl-debug")) setenv("NCCL_DEBUG", "INFO", 1);
  std::fflush(stdout);

  const int world = count_gpus();
  // [excerpt:launch]
  std::vector<int> id_read(world, -1), id_write, result_read(world);
  std::vector<pid_t> children(world);
  for (int r = 1; r < world; ++r) {  // a pipe from rank 0 to each other rank, for the id
    int fds[2];
    if (pipe(fds) != 0) return tutorial::kExitFailure;
    id_read[r] = fds[0];
    id_write.push_back(fds[1]);
  }
  for (int r = 0; r < world; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return tutorial::kExitFailure;
    result_read[r] = fds[0];
    children[r] = fork();
    if (children[r] == 0) {  // the child: GPU r
      close(fds[0]);
      const int code = run_rank(r, world, id_read[r], r == 0 ? id_write : std::vector<int>{}, fds[1],
                                int(cli.get_int("runs")));
      std::fflush(stdout);  // _exit skips stdio's buffers
      _exit(code);
    }
    close(fds[1]);
  }
  // [/excerpt:launch]
  for (int fd : id_write) close(fd);
  for (int r = 1; r < world; ++r) close(id_read[r]);

  // Wait for every child, but not forever: a rank that never joins would hang the others.
  tutorial::Verifier verifier;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(cli.get_int("timeout"));
  std::vector<int> status(world, -1);
  for (int left = world; left > 0;) {
    for (int r = 0; r < world; ++r) {
      int s = 0;
      if (status[r] == -1 && waitpid(children[r], &s, WNOHANG) == children[r]) {
        status[r] = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < world; ++r)
        if (status[r] == -1) {
          std::fprintf(stderr, "rank %d (GPU %d) did not finish in %lld s: stopping it\n", r, r, cli.get_int("timeout"));
          kill(children[r], SIGKILL);
          waitpid(children[r], nullptr, 0);
          status[r] = 128 + SIGKILL;
          --left;
        }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<Result> results(world);
  for (int r = 0; r < world; ++r) {
    const bool got = status[r] == 0 && read_all(result_read[r], &results[r], sizeof(Result));
    verifier.expect(tutorial::format("rank %d (GPU %d) exited 0 and reported", r, r), got);
    if (!got) return verifier.finish("08_process_per_gpu");
  }
  std::printf("\n### NCCL all-reduce, one process per GPU, %d processes (median of %lld runs, rank 0's clock)\n\n",
              world, cli.get_int("runs"));
  tutorial::Table table({"Floats", "Bytes", "Time", "Bus GB/s"});
  for (int s = 0; s < kSizes; ++s) {
    double worst = 0;
    for (const Result& r : results) worst = std::isnan(r.max_error[s]) ? NAN : std::max(worst, r.max_error[s]);
    verifier.exact(tutorial::format("all-reduce of %zu floats, every rank", kCounts[s]), worst);
    const double ms = results[0].median_ms[s], bytes = kCounts[s] * 4.0;
    table.add_row({std::to_string(kCounts[s]), tutorial::format("%.0f", bytes), tutorial::format_time(ms),
                   tutorial::format("%.1f", bytes / (ms * 1e6) * 2.0 * (world - 1) / world)});
    verifier.figure(tutorial::format("us_%zu", kCounts[s]), std::round(ms * 1e4) / 10);
  }
  std::printf("\n");
  table.print();
  verifier.figure("processes", world);
  return verifier.finish("08_process_per_gpu");
}
