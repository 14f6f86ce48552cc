#!/usr/bin/env bash
# Starts a program as <np> processes with Open MPI's mpirun, one per GPU, as chapter 08's tests do:
#
#   08_multi_gpu/mpirun.sh 2 ./build/bin/08_mpi_allreduce [args...]
#   08_multi_gpu/mpirun.sh all ./build/bin/08_mpi_allreduce [args...]   # one per GPU this machine has
#
# Every rank exits 77 when the GPUs are missing (they agree first), and mpirun passes on the
# first non-zero exit status, so a skip stays a skip and a failure a failure.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 <processes> <program> [args...]" >&2
  exit 2
fi
np=$1
shift
source "$(dirname "$0")/gpu_count.sh"
[ "$np" = all ] && np=$(processes_for_all_gpus)
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev). Skipping (exit code 77)."
  exit 77
fi
# NVLink multicast stays off in every rank; -x also carries it to other hosts, which do not inherit
# this shell's environment.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
flags=(-np "$np" --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS)
# --bind-to none: NCCL's helper threads need cores beside the rank's own; --oversubscribe: a
# machine with fewer cores than ranks (CI) may still start them.
flags+=(--oversubscribe)
# -q: no banner of mpirun's own when a rank exits non-zero (a skip is exit 77); each rank says why.
# MPIRUN_QUIET=0 keeps mpirun's lines (fault_test.sh: mpirun names a rank that was killed).
[ "${MPIRUN_QUIET:-1}" = 1 ] && flags+=(-q)
# Open MPI refuses to run as root unless told to; in a container the user is often root.
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
exec mpirun "${flags[@]}" "$@"
