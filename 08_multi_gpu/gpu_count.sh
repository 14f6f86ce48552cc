# Sourced by mpirun.sh and torchrun.sh: the process count that "all" stands for.
# One per GPU this process may use (CUDA_VISIBLE_DEVICES narrows them), at least two: with fewer the
# ranks start, find too few GPUs and skip (77), which is the right answer there.
processes_for_all_gpus() {
  local count
  count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && count=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
  echo $((count < 2 ? 2 : count))
}
