#!/usr/bin/env bash
# One development call on the four-GPU machine: build, the helpers' one-GPU lanes side by side,
# then chapter 08's tests on every GPU, time-boxed to the call. usage: scripts/dev/round1.sh <out>
# (everything packed into <out>/all.tgz: a lent machine sends back at most 8 files)
set -uo pipefail
dest=$1
out=/tmp/round1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out"
{ nvidia-smi -L; nvidia-smi topo -m; nvcc --version | tail -1; } > "$out/machine.txt" 2>&1
cmake --preset default > "$out/configure.log" 2>&1 && cmake --build build -j 60 > "$out/build.log" 2>&1
echo "build exit $? after $SECONDS s"; grep -E "error|FAILED" "$out/build.log" | head -20
(CUDA_VISIBLE_DEVICES=0 bash scripts/dev/concurrency.sh "$out/conc" > "$out/conc.txt" 2>&1) &
(CUDA_VISIBLE_DEVICES=1 bash scripts/dev/ch07.sh "$out/ch07" > "$out/ch07.txt" 2>&1) &
(CUDA_VISIBLE_DEVICES=2 bash scripts/dev/newcomer.sh "$out/newc" > "$out/newc.txt" 2>&1) &
(CUDA_VISIBLE_DEVICES=3 timeout 200 python3 08_multi_gpu/sass_ll_line.py build/bin/08_allreduce > "$out/sass.txt" 2>&1) &
wait
echo "lanes done after $SECONDS s"
left=$((575 - SECONDS))
timeout -k 5 "$left" ctest --test-dir build -R '^08_' -LE benchmark --output-on-failure --timeout 150 > "$out/ctest08.log" 2>&1
echo "ctest08 exit $? after $SECONDS s"
grep -E "tests passed|\*\*\*|Failed|Not Run|Timeout" "$out/ctest08.log" | head -40
tar czf "$dest/all.tgz" -C /tmp round1
