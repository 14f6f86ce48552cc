#!/usr/bin/env bash
# Two hosts without InfiniBand, simulated on one: NCCL's all-reduce forced onto its network
# transport (sockets, over loopback), with NCCL_DEBUG=INFO's lines that prove it, then the table.
#
#   08_multi_gpu/nccl_network.sh ./build/bin/08_mpi_allreduce [args...]
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 <08_mpi_allreduce> [args...]" >&2
  exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$(dirname "$0")/mpirun.sh" 2 "$1" --network --nccl-only --nccl-debug "${@:2}" >"$log" 2>&1
status=$?
echo "NCCL_DEBUG=INFO, the lines that name the transport (rank 0):"
grep -E "NCCL INFO (NCCL_(P2P|SHM)_DISABLE|NCCL_SOCKET_IFNAME|Using network)" "$log" | awk '!seen[$0]++'
grep -E "NCCL INFO Channel .* via NET/" "$log" | head -n 4
echo "($(grep -c -E "NCCL INFO Channel .* via " "$log") channel lines in all, $(grep -c -E "NCCL INFO Channel .* via NET/" "$log") of them via NET)"
echo
grep -v "NCCL INFO" "$log"
exit $status
