#!/usr/bin/env bash
# Development run of chapter 08 on a GPU machine with two or more GPUs (not part of the GPU
# check, which runs the registered tests): build, verify, benchmark, sanitize, then a summary.
#   OUT=/tmp/out bash 08_multi_gpu/dev_run.sh [all|tune]   (tune: leaves out the launcher, PyTorch and 4 pieces)
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/08_dev}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
build=build-dev
bin=$build/bin

{ date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print("torch", torch.__version__)' 2>&1; } > "$out/machine.txt" 2>&1

start=$SECONDS
if ! { cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DTUTORIAL_GPU_CHECK=ON &&
       cmake --build $build --target 08_peers 08_allreduce 08_split_matmul 08_process_per_gpu -j16; } > "$out/build.txt" 2>&1; then
  tail -n 40 "$out/build.txt"
  exit 1
fi
echo "build: $((SECONDS - start)) s"

start=$SECONDS
timeout 150 ctest --test-dir $build -R '^08_' -LE 'sanitize|benchmark' -E 'figures' --output-on-failure --timeout 90 \
  > "$out/ctest.txt" 2>&1
echo "ctest: $((SECONDS - start)) s"

start=$SECONDS
{
  for blocks in 1 2 4; do timeout 60 $bin/08_peers --blocks-per-sm $blocks; done
  timeout 150 $bin/08_allreduce
  timeout 60 $bin/08_split_matmul --chunks 8 --runs 10 --timeline "$out/timeline_8.csv"
  if [ "${1:-all}" = all ]; then
    timeout 60 $bin/08_split_matmul --chunks 4 --runs 10 --timeline "$out/timeline_4.csv"
    timeout 60 $bin/08_process_per_gpu
    timeout 90 python3 08_multi_gpu/torch_allreduce.py
  fi
} > "$out/bench.txt" 2>&1
echo "benchmarks: $((SECONDS - start)) s"
[ "${1:-all}" = all ] && timeout 60 $bin/08_process_per_gpu --nccl-debug --runs 2 > "$out/nccl_debug.txt" 2>&1

start=$SECONDS
{
  for tool in memcheck racecheck synccheck initcheck; do
    echo "== $tool 08_allreduce"; timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 $bin/08_allreduce --no-nccl --n 4099 --check-only | tail -n 3
  done
  echo "== memcheck 08_peers"; timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 $bin/08_peers --n 4099 --check-only
  echo "== memcheck 08_split_matmul"; timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 $bin/08_split_matmul --m 65 --n 33 --k 17 --chunks 2 --check-only | tail -n 3
} > "$out/sanitize.txt" 2>&1
echo "sanitize: $((SECONDS - start)) s"

echo; echo "=== summary"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*" "$out/ctest.txt" | head -n 20
grep -E "^\| |^Goal|^### |FAILED|Max error: [^0]" "$out/bench.txt"
grep -E "^==|ERROR SUMMARY|SUMMARY \{|FAILED" "$out/sanitize.txt" | cut -c1-160
grep -E "via P2P|via SHM|NVLS|Channel 00" "$out/nccl_debug.txt" | head -n 6
