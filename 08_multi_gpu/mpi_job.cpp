// The MPI side of chapter 08's process-per-GPU program (see mpi_job.hpp). Compiled by the C++
// compiler only: MPI's include paths and options stay out of the CUDA sources.
#include "mpi_job.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <cstdio>
#include <cstdlib>

#include "watchdog.hpp"

namespace mpi_job {
namespace {

MPI_Comm g_world = MPI_COMM_NULL;  // a copy of MPI_COMM_WORLD whose errors are returned, not fatal
MPI_Comm g_host = MPI_COMM_NULL;   // the ranks on this host

void check(int code, const char* call, const char* file, int line) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  std::fprintf(stderr, "MPI call failed: %s\n  at %s:%d\n  %s\n", call, file, line, text);
  MPI_Abort(MPI_COMM_WORLD, 1);  // the other ranks would wait for this one forever
  std::exit(1);
}

}  // namespace
}  // namespace mpi_job

#define MPI_CHECK(call) ::mpi_job::check((call), #call, __FILE__, __LINE__)

namespace mpi_job {

Job start(int* argc, char*** argv) {
  MPI_CHECK(MPI_Init(argc, argv));
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &g_world));
  MPI_CHECK(MPI_Comm_set_errhandler(g_world, MPI_ERRORS_RETURN));
  Job job;
  MPI_CHECK(MPI_Comm_rank(g_world, &job.rank));
  MPI_CHECK(MPI_Comm_size(g_world, &job.world));
  // [excerpt:local-rank]
  MPI_Comm host;  // the ranks that share this host's memory, hence its GPUs
  MPI_CHECK(MPI_Comm_split_type(g_world, MPI_COMM_TYPE_SHARED, job.rank, MPI_INFO_NULL, &host));
  MPI_CHECK(MPI_Comm_rank(host, &job.local_rank));  // this process's GPU
  MPI_CHECK(MPI_Comm_size(host, &job.local_world));
  // [/excerpt:local-rank]
  g_host = host;
  return job;
}

void finish() {
  MPI_CHECK(MPI_Comm_free(&g_host));
  MPI_CHECK(MPI_Comm_free(&g_world));
  MPI_CHECK(MPI_Finalize());
}

void broadcast(void* data, size_t bytes, int root) {
  auto wait = multi_gpu::waiting("MPI_Bcast");
  MPI_CHECK(MPI_Bcast(data, int(bytes), MPI_BYTE, root, g_world));
}

void all_gather(const void* mine, void* all, size_t bytes) {
  auto wait = multi_gpu::waiting("MPI_Allgather");
  MPI_CHECK(MPI_Allgather(mine, int(bytes), MPI_BYTE, all, int(bytes), MPI_BYTE, g_world));
}

void barrier() {
  auto wait = multi_gpu::waiting("MPI_Barrier");
  MPI_CHECK(MPI_Barrier(g_world));
}

double max_over_ranks(double value) {
  auto wait = multi_gpu::waiting("MPI_Allreduce");
  double result = 0;
  MPI_CHECK(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, g_world));
  return result;
}

int min_over_ranks(int value) {
  auto wait = multi_gpu::waiting("MPI_Allreduce");
  int result = 0;
  MPI_CHECK(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MIN, g_world));
  return result;
}

void abort_job(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // not reached: MPI_Abort ends this process too
}

struct Progress::Slot {  // one cache line per rank
  std::atomic<long> count;
  std::atomic<long long> alive_ns;
  char pad[64 - sizeof(std::atomic<long>) - sizeof(std::atomic<long long>)];
};
static_assert(std::atomic<long>::is_always_lock_free && std::atomic<long long>::is_always_lock_free,
              "shared between processes: the atomics must not hide a lock");

Progress::Progress() {
  auto wait = multi_gpu::waiting("setting up the progress counters (MPI collectives)");
  int rank = 0, world = 0;
  MPI_CHECK(MPI_Comm_rank(g_world, &rank));
  MPI_CHECK(MPI_Comm_size(g_world, &world));
  me_ = rank;
  int local = 0, local_world = 0, leader = rank;
  MPI_CHECK(MPI_Comm_rank(g_host, &local));
  MPI_CHECK(MPI_Comm_size(g_host, &local_world));
  MPI_CHECK(MPI_Bcast(&leader, 1, MPI_INT, 0, g_host));
  // The host's first rank makes the segment; its name reaches the others only once it exists.
  bytes_ = local_world * sizeof(Slot);
  char name[64] = {};
  int fd = -1;
  if (local == 0) {
    std::snprintf(name, sizeof name, "/cuda-course-08-%d-%d", int(getpid()), rank);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, off_t(bytes_)) != 0) fd = -1;  // ftruncate zeroes it: every count starts at 0
  }
  MPI_CHECK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, g_host));
  if (local != 0) fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) {
    std::fprintf(stderr, "rank %d: shared memory %s: %s\n", rank, name, std::strerror(errno));
    abort_job(1);
  }
  void* mapped = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) {
    std::fprintf(stderr, "rank %d: mmap of %s: %s\n", rank, name, std::strerror(errno));
    abort_job(1);
  }
  slots_ = static_cast<Slot*>(mapped);
  MPI_CHECK(MPI_Barrier(g_host));  // every rank of the host has it mapped: the name can go
  if (local == 0) shm_unlink(name);
  leader_.resize(world);
  local_.resize(world);
  MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leader_.data(), 1, MPI_INT, g_world));
  MPI_CHECK(MPI_Allgather(&local, 1, MPI_INT, local_.data(), 1, MPI_INT, g_world));
  alive();
}

Progress::~Progress() { munmap(slots_, bytes_); }

void Progress::step() { slots_[local_[me_]].count.fetch_add(1); }

// Called from the watchdog's thread, as are read() and who_is_missing(): no MPI call in them.
void Progress::alive() { slots_[local_[me_]].alive_ns.store(multi_gpu::Watchdog::now_ns()); }

bool Progress::read(int rank, long* count, double* silent_s) const {
  if (leader_[rank] != leader_[me_]) return false;
  *count = slots_[local_[rank]].count.load();
  *silent_s = (multi_gpu::Watchdog::now_ns() - slots_[local_[rank]].alive_ns.load()) / 1e9;
  return true;
}

std::string Progress::who_is_missing(int me) const {
  long mine = 0, theirs = 0;
  double silent = 0;
  read(me, &mine, &silent);
  std::string stopped, behind, elsewhere;
  for (int r = 0; r < int(leader_.size()); ++r) {
    if (r == me) continue;
    if (!read(r, &theirs, &silent)) elsewhere += (elsewhere.empty() ? "" : ", ") + std::to_string(r);
    else if (silent > 1.0)  // its watchdog posts ten times a deadline: a second of silence is a stopped process
      stopped += (stopped.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
                 " stopped answering (silent " + std::to_string(int(silent)) + " s)";
    else if (theirs < mine)
      behind += (behind.empty() ? "" : ", ") + std::to_string(r) + " (at call " + std::to_string(theirs) + ")";
  }
  std::string who;
  if (!stopped.empty()) who += stopped;
  if (!behind.empty()) who += (who.empty() ? "" : "; ") + std::string("rank ") + behind + " never called it (this rank is at call " + std::to_string(mine) + ")";
  if (!elsewhere.empty()) who += (who.empty() ? "" : "; ") + std::string("ranks on other hosts (") + elsewhere + ") cannot be seen from here";
  return who.empty() ? "every rank on this host is alive and has reached this call" : who;
}

}  // namespace mpi_job
