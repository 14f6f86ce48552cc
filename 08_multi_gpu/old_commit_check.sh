#!/usr/bin/env bash
# Runs chapter 08's fault tests against an older version of the code, to show that each one fails
# there: a test that cannot fail proves nothing. NOTES.md says which commit and what came out.
#
#   08_multi_gpu/old_commit_check.sh <old source tree> <this build's bin folder>
#
# <old source tree> holds the old commit's common/ and 08_multi_gpu/, e.g. from
#   git archive 31995db common 08_multi_gpu | tar -x -C /tmp/old
# The tests are this commit's: fault_test.cu is compiled against the old headers (it uses only what
# every version offers), and the old programs get the two test hooks the new tests need and nothing
# else: the absent rank of --hang-nccl waits outside MPI (in cudaStreamSynchronize, as a stuck rank
# does), and STALL_GPU=g stalls GPU g's stream in the middle of 08_allreduce's timed run. A test that
# hangs on the old code is ended by an outer timeout (exit status 124). Needs nvcc, mpicxx, NCCL and
# every GPU of the machine.
set -uo pipefail
if [ $# -ne 2 ]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
if [ ! -d "$1/08_multi_gpu" ]; then
  echo "old_commit_check: skipped: no old sources in $1 (git archive 31995db common 08_multi_gpu | tar -x -C $1)"
  exit 77
fi
old=$(cd "$1" && pwd) bin=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc_flags=(-std=c++17 -O3 -lineinfo -gencode arch=compute_90,code=sm_90 -I "$old/common/include")

echo "## Old: $(cat "$old/COMMIT" 2>/dev/null || echo "$old")"
# The test hooks, put into the old sources (nothing else changes).
python3 - "$old/08_multi_gpu" <<'EOF'
import pathlib, sys
src = pathlib.Path(sys.argv[1])
hang = src / "mpi_hang.cuh"
text = hang.read_text()
stuck = """{
    allreduce::sleep_kernel_for_tests<<<1, 1, 0, stream>>>(60'000'000'000ull);
    cudaStreamSynchronize(stream);
    return tutorial::kExitFailure;
  }"""
text = text.replace("{  // call 2: this rank never comes; it waits elsewhere, as a stuck rank would\n"
                    "    mpi_job::barrier();\n    return tutorial::kExitFailure;  // not reached: the others end the job\n  }",
                    stuck, 1)
hang.write_text(text)
lib = src / "allreduce.cuh"
lib.write_text(lib.read_text().replace("// [excerpt:barrier]", "__global__ void sleep_kernel_for_tests(unsigned long long ns) "
                                       "{ sleep_ns(ns); }\n\n// [excerpt:barrier]", 1))
main = src / "my_allreduce.cu"
text = main.read_text()
text = text.replace("""  for (size_t n : counts) {
    const size_t bytes = n * sizeof(float);
    const std::string label = size_label(bytes);
    const bool graphs_here""", """  for (size_t n : counts) {
    const size_t bytes = n * sizeof(float);
    const std::string label = size_label(bytes);
    if (getenv("STALL_GPU") && n == counts[counts.size() / 2]) {
      const int g = atoi(getenv("STALL_GPU"));
      printf("Test: GPU %d's stream stalls now.\\n", g);
      fflush(stdout);
      CUDA_CHECK(cudaSetDevice(g));
      allreduce::sleep_kernel_for_tests<<<1, 1, 0, streams[g]>>>(120'000'000'000ull);
    }
    const bool graphs_here""", 1)
main.write_text(text)
EOF
cp "$here/fault_test.cu" "$old/08_multi_gpu/"
# The three old programs, compiled side by side.
nvcc "${nvcc_flags[@]}" "$old/08_multi_gpu/fault_test.cu" -o "$work/faults_old" &
nvcc "${nvcc_flags[@]}" "$old/08_multi_gpu/my_allreduce.cu" -lnccl -o "$work/allreduce_old" &
(mpicxx -O2 -c "$old/08_multi_gpu/mpi_job.cpp" -o "$work/mpi_job.o" &&
 nvcc "${nvcc_flags[@]}" "$old/08_multi_gpu/mpi_allreduce.cu" "$work/mpi_job.o" -lnccl \
   $(mpicxx --showme:link | sed 's/-Wl,[^ ]*//g; s/-pthread//g') -o "$work/mpi_old") &
for job in $(jobs -p); do wait "$job" || exit 1; done

run() {  # <label> <seconds> <command...>: one test on the old code and its verdict
  local label=$1 limit=$2
  shift 2
  echo
  echo "### $label"
  echo '```text'
  timeout -k 5 "$limit" "$@" 2>&1 | grep -E -v '^(GPU [0-9]: |Check ok: test copy)' | tail -n 12
  local status=${PIPESTATUS[0]}
  echo '```'
  echo "exit status $status$([ "$status" -eq 124 ] && echo ' (still running at the outer timeout: it hung)')"
}

for t in barrier-wrap ll-wrap replay grids graph-stress fault-stress; do
  run "08_allreduce_faults --test $t, built against the old kernels" 120 "$work/faults_old" --test "$t"
done
run "hang_nccl under osc/pt2pt, the absent rank stuck outside MPI" 35 \
  env OMPI_MCA_osc=pt2pt bash "$here/hang_test.sh" 30 "rank [0-9]+ never called it" \
  bash "$here/mpirun.sh" all "$work/mpi_old" --hang-nccl
run "GPU 1's stream stalled in the middle of the timed run (one process)" 40 \
  env STALL_GPU=1 "$work/allreduce_old" --max-bytes 4194304 --runs 5 --rounds 2
for signal in STOP KILL; do
  run "rank 1 sent SIG$signal in the middle of a timed run (mpirun)" 90 \
    bash "$here/fault_test.sh" "$signal" 5 "rank 1" "$here/mpirun.sh" all "$work/mpi_old" \
    --max-bytes 16777216 --runs 200 --rounds 50
done
