#!/usr/bin/env bash
# Starts torch_allreduce.py with torchrun, one process per GPU, as chapter 08's tests do:
#
#   08_multi_gpu/torchrun.sh <python> <processes> 08_multi_gpu/torch_allreduce.py [args...]
#   08_multi_gpu/torchrun.sh <python> all 08_multi_gpu/torch_allreduce.py [args...]   # one per GPU
#
# torchrun reports any rank's non-zero exit as its own failure (exit 1), so a skip is decided
# before it starts: the script itself says whether this machine has the GPUs (exit 77 and why).
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 <python> <processes> <script> [args...]" >&2
  exit 2
fi
python=$1
np=$2
script=$3
shift 3
source "$(dirname "$0")/gpu_count.sh"
[ "$np" = all ] && np=$(processes_for_all_gpus)
"$python" "$script" --require-gpus "$np" || exit $?
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
exec "$python" -m torch.distributed.run --standalone --nproc-per-node="$np" "$script" "$@"
