#!/usr/bin/env bash
# Issues 42 and 43 (chapter 08), on every GPU of the machine, after the default build in build/:
#   part a: the chapter's tests (faults included), compute-sanitizer on the touched kernels
#           (one process and under mpirun), short timed runs of 08_allreduce and 08_mpi_allreduce;
#   part b: the fault tests against the old commit (old_commit_check.sh, .old08/), recorded.
# Full logs to $2; a short summary last.   usage: scripts/dev/ch08.sh a|b <output folder>
set -uo pipefail
part=${1:?usage: $0 a|b <output folder>}
out=${2:?usage: $0 a|b <output folder>}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
summary=()
run() {  # run <name> <seconds> <command...>
  local name=$1 limit=$2 started=$SECONDS
  shift 2
  timeout -k 5 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-28s exit %3s  %4d s' "$name" "$rc" $((SECONDS - started)))")
  while IFS= read -r line; do summary+=("    $line"); done < <(
    grep -hE '^(Goal:|Check FAILED|Max error: [^0]|Relative error.*FAILED|.*Failed  |.*\*\*\*|[0-9]+% tests passed)' \
      "$out/$name.log" | head -12 | cut -c1-170)
}
san=(compute-sanitizer --error-exitcode 99 --print-limit 10)
if [ "$part" = a ]; then
  run ctest08 330 ctest --test-dir build -R '^08_' -LE benchmark --output-on-failure --timeout 180
  run san_faults 120 "${san[@]}" --tool memcheck build/bin/08_allreduce_faults --test graph-stress --replays 2
  run san_allreduce 120 "${san[@]}" --tool racecheck build/bin/08_allreduce --no-nccl --n 4099 --check-only
  run san_mpi 120 bash 08_multi_gpu/mpirun.sh all "${san[@]}" --tool memcheck build/bin/08_mpi_allreduce \
    --no-nccl --n 4099 --check-only
  run allreduce4 150 build/bin/08_allreduce --runs 10 --rounds 2
  run mpi4 120 bash 08_multi_gpu/mpirun.sh all build/bin/08_mpi_allreduce --runs 10 --rounds 2
  grep -A14 '### The model' "$out/allreduce4.log" > "$out/model.txt"
  grep -B2 -A16 '^| Size' "$out/allreduce4.log" | cut -c1-400 > "$out/tables.txt"
else
  run old_commit 420 python3 scripts/results.py record 08_old_commit --results docs/results -- \
    bash 08_multi_gpu/old_commit_check.sh .old08 build/bin
  cp docs/results/08_old_commit.md docs/results/data/08_old_commit.* "$out/" 2>/dev/null
fi
echo "== ch08 part $part: summary (logs in $out) =="
printf '%s\n' "${summary[@]}"
