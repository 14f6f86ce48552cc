// The MPI side of chapter 08's process-per-GPU program (see mpi_job.hpp). Compiled by the C++
// compiler only: MPI's include paths and options stay out of the CUDA sources.
#include "mpi_job.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace mpi_job {
namespace {

MPI_Comm g_world = MPI_COMM_NULL;  // a copy of MPI_COMM_WORLD whose errors are returned, not fatal

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
  MPI_CHECK(MPI_Comm_free(&host));
  return job;
}

void finish() {
  MPI_CHECK(MPI_Comm_free(&g_world));
  MPI_CHECK(MPI_Finalize());
}

void broadcast(void* data, size_t bytes, int root) {
  MPI_CHECK(MPI_Bcast(data, int(bytes), MPI_BYTE, root, g_world));
}

void all_gather(const void* mine, void* all, size_t bytes) {
  MPI_CHECK(MPI_Allgather(mine, int(bytes), MPI_BYTE, all, int(bytes), MPI_BYTE, g_world));
}

void barrier() { MPI_CHECK(MPI_Barrier(g_world)); }

double max_over_ranks(double value) {
  double result = 0;
  MPI_CHECK(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, g_world));
  return result;
}

int min_over_ranks(int value) {
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

Progress::Progress() {
  MPI_Win window;
  MPI_CHECK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, g_world, &mine_, &window));
  MPI_CHECK(MPI_Win_set_errhandler(window, MPI_ERRORS_RETURN));
  *mine_ = 0;
  MPI_CHECK(MPI_Win_lock_all(0, window));  // one passive epoch for the window's whole life
  MPI_CHECK(MPI_Win_sync(window));         // the 0 above is what the others read
  MPI_CHECK(MPI_Barrier(g_world));
  window_ = new MPI_Win(window);
}

Progress::~Progress() {
  MPI_Win* window = static_cast<MPI_Win*>(window_);
  MPI_CHECK(MPI_Win_unlock_all(*window));
  MPI_CHECK(MPI_Win_free(window));
  delete window;
}

void Progress::step() {
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(g_world, &rank));
  const long one = 1;
  long before = 0;
  MPI_Win window = *static_cast<MPI_Win*>(window_);
  MPI_CHECK(MPI_Fetch_and_op(&one, &before, MPI_LONG, rank, 0, MPI_SUM, window));  // atomic
  MPI_CHECK(MPI_Win_flush(rank, window));
}

long Progress::read(int rank) const {
  long value = 0;
  MPI_Win window = *static_cast<MPI_Win*>(window_);
  MPI_CHECK(MPI_Fetch_and_op(nullptr, &value, MPI_LONG, rank, 0, MPI_NO_OP, window));
  MPI_CHECK(MPI_Win_flush(rank, window));
  return value;
}

}  // namespace mpi_job
