#!/usr/bin/env bash
# Part 1 from start to end: each step prints what it measured and ends with a SUMMARY line.
#
#   bash 06_torch_extension/part1/run.sh [DIR]
#
# Needs PyTorch with CUDA, nvcc, Triton and, for step 4, ncu; no CMake build. The flame graph goes
# to DIR (default: build/06_torch_extension/part1 in the repository, which git ignores). Stops at
# the first step that does not pass, with its exit status: 77 means skipped (no GPU, Triton or ncu).
set -eu
part1=$(cd "$(dirname "$0")" && pwd)
out=${1:-$part1/../../build/06_torch_extension/part1}
python3 "$part1/square_inline.py"
python3 "$part1/profile_squares.py"
python3 "$part1/ncu_squares.py"
python3 "$part1/profile_lectures.py" --out-dir "$out"
