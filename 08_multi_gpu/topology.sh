#!/usr/bin/env bash
# How this machine's GPUs are joined, as the driver reports it: the record that chapter 08's
# topology figure and text are drawn from (benchmark 08_topology in the GPU check).
#   nvidia-smi -L            the GPU models (the two-GPU machine may lend H100s or H200s),
#                            and each GPU's PCI bus id
#   nvidia-smi topo -m       the path between each pair: NV<k> is k NVLink links
#   nvidia-smi nvlink -s     each link's speed
#   nvidia-smi nvlink -R     each link's far end: another GPU's PCI bus id when the links join
#                            two GPUs directly; no GPU's when they end at the board's NVSwitch
#                            chips (which a virtual machine does not see on its PCI bus)
#   nvidia-smi -q            the fabric state (HGX boards register their GPUs with the NVSwitch fabric)
# Exit 77 (skipped) without nvidia-smi or without two GPUs.
set -uo pipefail
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "topology: no NVIDIA GPU here (nvidia-smi missing or sees no device). Skipping (exit code 77)."
  exit 77
fi
gpus=$(nvidia-smi -L | grep -c '^GPU ')
if [ "$gpus" -lt 2 ]; then
  echo "topology: this machine has $gpus GPU; chapter 08 needs two or more. Skipping (exit code 77)."
  exit 77
fi
section() { printf '\n### %s\n\n```text\n' "$1"; }
end() { printf '```\n'; }
section "nvidia-smi -L"; nvidia-smi -L; nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader; end
# topo -m underlines its header with terminal escape codes: drop them.
section "nvidia-smi topo -m"; nvidia-smi topo -m | sed 's/\x1b\[[0-9;]*m//g'; end
section "nvidia-smi nvlink -s"; nvidia-smi nvlink -s; end
section "nvidia-smi nvlink -R (far end of each link)"; nvidia-smi nvlink -R 2>&1; end
section "nvidia-smi -q: fabric"; nvidia-smi -q | grep -A 4 -E '^\s*Fabric' | head -n 40; end
