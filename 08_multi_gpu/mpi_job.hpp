/// \file mpi_job.hpp
/// \brief The few MPI calls chapter 08's process-per-GPU program makes, behind plain C++.
///
/// mpirun (or srun) starts one copy of the program per GPU, on one host or many. MPI tells each
/// copy its rank in the job and, through MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), its rank
/// among the copies on its own host: the GPU it takes. Everything MPI does here is in
/// mpi_job.cpp, compiled by the C++ compiler alone, so MPI's compiler options never reach nvcc.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mpi_job {

struct Job {
  int rank = 0;         ///< in the whole job, 0 .. world - 1
  int world = 1;        ///< processes in the job
  int local_rank = 0;   ///< among the processes on this host: the GPU this process uses
  int local_world = 1;  ///< processes on this host
};

/// MPI_Init, then where this process stands. Every MPI call is checked (message, exit 1).
Job start(int* argc, char*** argv);
/// MPI_Finalize.
void finish();
/// Every rank gets root's \p bytes (MPI_Bcast).
void broadcast(void* data, size_t bytes, int root);
/// all[r * bytes .. ] = rank r's \p mine, on every rank (MPI_Allgather).
void all_gather(const void* mine, void* all, size_t bytes);
void barrier();
/// The largest (smallest) of every rank's value, on every rank.
double max_over_ranks(double value);
int min_over_ranks(int value);
/// Ends every process of the job with \p code (MPI_Abort): for a rank that cannot wait for the others.
[[noreturn]] void abort_job(int code);

/// How far every rank on this host got, readable by the others while its owner is busy, stuck or
/// stopped: a counter and an "alive" clock per rank in shared memory (shm_open), read with plain loads.
/// Not MPI: one-sided MPI reads can need the owner's help (Open MPI's osc/pt2pt makes progress only
/// inside the owner's MPI calls), and a rank stuck in cudaStreamSynchronize makes none.
class Progress {
 public:
  Progress();  ///< collective
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// This rank reached its next collective call.
  void step();
  /// This rank is still running (its watchdog posts this ten times a deadline; a stopped process stops).
  void alive();
  /// Rank \p rank's count and how long since it last posted alive, if it shares this host.
  bool read(int rank, long* count, double* silent_s) const;
  /// One line for a watchdog: which ranks stopped answering or are behind this one.
  std::string who_is_missing(int me) const;

 private:
  struct Slot;
  Slot* slots_ = nullptr;
  size_t bytes_ = 0;
  int me_ = 0;
  std::vector<int> leader_, local_;  // per world rank: its host's first world rank, its rank on the host
};

}  // namespace mpi_job
