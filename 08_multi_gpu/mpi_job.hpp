/// \file mpi_job.hpp
/// \brief The few MPI calls chapter 08's process-per-GPU program makes, behind plain C++.
///
/// mpirun (or srun) starts one copy of the program per GPU, on one host or many. MPI tells each
/// copy its rank in the job and, through MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), its rank
/// among the copies on its own host: the GPU it takes. Everything MPI does here is in
/// mpi_job.cpp, compiled by the C++ compiler alone, so MPI's compiler options never reach nvcc.
#pragma once

#include <cstddef>

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

/// A counter per rank that any rank can read while its owner is busy or stuck (one-sided MPI:
/// passive-target reads need nothing from the owner). Ranks post how far they got, so that a
/// rank that gave up waiting can say which one never came.
class Progress {
 public:
  Progress();
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// Adds one to this rank's counter.
  void step();
  /// Rank \p rank's counter, read without its help.
  long read(int rank) const;

 private:
  void* window_;  // MPI_Win, kept opaque so this header needs no mpi.h
  long* mine_ = nullptr;
};

}  // namespace mpi_job
