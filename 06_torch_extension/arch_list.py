"""Translates CMake's CUDA architecture list into PyTorch's TORCH_CUDA_ARCH_LIST.

    python3 arch_list.py "80-real;90"    ->  8.0;9.0+PTX

The two spell the same idea differently. CMake: "80-real" is machine code (SASS) for sm_80 only,
"90-virtual" is PTX for compute_90 only, a plain "90" is both. PyTorch: "8.0" is machine code for
sm_80, "9.0+PTX" is machine code plus PTX; there is no way to ask for PTX alone.

CMakeLists.txt runs this at configure time; notes about what could not be translated exactly go to
stderr, and CMake shows them.
"""

import re
import sys

FALLBACK = "8.0;9.0+PTX"  # the course's default GPUs (A100, H100) plus PTX for newer ones


def torch_arch_list(cmake_archs: str) -> tuple[str, list[str]]:
    """Returns (TORCH_CUDA_ARCH_LIST value, notes) for a CMAKE_CUDA_ARCHITECTURES value."""
    notes: list[str] = []
    entries = [e for e in cmake_archs.split(";") if e]
    chosen: dict[str, bool] = {}  # "9.0" -> wants PTX, in the order given
    for entry in entries:
        match = re.fullmatch(r"(\d+)(\d)([af]?)(-real|-virtual)?", entry)
        if not match:  # native, all, all-major, OFF: nothing to translate
            notes.append(f"'{entry}' has no TORCH_CUDA_ARCH_LIST equivalent: using {FALLBACK}")
            return FALLBACK, notes
        major, minor, suffix, kind = match.groups()
        if suffix == "f":
            notes.append(f"'{entry}': PyTorch has no family ('f') targets, building {major}.{minor}")
            suffix = ""
        if kind == "-virtual":
            notes.append(f"'{entry}': PyTorch cannot build PTX alone, building machine code as well")
        version = f"{major}.{minor}{suffix}"
        chosen[version] = chosen.get(version, False) or kind != "-real"
    if not chosen:
        notes.append(f"no architectures given: using {FALLBACK}")
        return FALLBACK, notes
    return ";".join(v + ("+PTX" if ptx else "") for v, ptx in chosen.items()), notes


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} '<CMAKE_CUDA_ARCHITECTURES>'")
    value, notes = torch_arch_list(sys.argv[1])
    for note in notes:
        print(note, file=sys.stderr)
    print(value)
