#!/usr/bin/env python3
"""A build made on another machine, run on this GPU machine: scripts/gpu-check.sh --prebuilt.

It exists for CI's second build, CUDA 11.8: the GPU machine has CUDA 13 and no package manager,
but its driver runs CUDA 11.8 programs (the course links the CUDA runtime statically).

  prebuilt.py pack <build-dir>            on the build machine (scripts/gpu-check.sh --pack):
      writes <build-dir>/gpu-carry.tar.gz, well under the 64 MiB a lent machine takes: the
      programs and test binaries, every CTestTestfile.cmake, CTest's list of the tests, a note of
      the build, and the CUDA libraries they load that a CUDA 13 machine lacks, where small
      (libcupti.so.11.8, 7 MB; cuBLAS 11, 670 MB, is not carried, and the tests of the programs
      that load it are listed as not run, with that reason).
  prebuilt.py prepare <build-dir> <logs> <record>   on the GPU machine, before CTest runs:
      unpacks the carry; makes the build machine's source path and Python (the CTest files name
      them) resolve to this tree and this machine's Python; writes <logs>/not-run.txt (for ctest --exclude-from-file) with the tests that
      call a tool or load a library only the build machine has, and <logs>/extra.json (the build,
      those tests with the reason) for the record.
"""
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CUDA_LIBRARIES = ("libcupti", "libcublas", "libcublasLt", "libcudart", "libnvToolsExt", "libnvrtc",
                  "libcufft", "libcurand", "libcusparse", "libcusolver")
SMALL = 16 << 20
OUTPUTS = ("04_fatbin", "04_ptx_only")  # chapter 04's programs: what the driver runs from the build


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def absolute_paths(word):
    """The absolute paths in one word of a test's command (-DX=/a/b, /a/b;/c/d, ...)."""
    for separator in ";=:'\"":
        word = word.replace(separator, " ")
    return [part for part in word.split() if part.startswith("/")]


def loaded_libraries(program, library_path=""):
    """{library name: path or None (not found)} of what ldd says \\p program loads."""
    env = {**os.environ, "LD_LIBRARY_PATH": library_path} if library_path else None
    out = subprocess.run(["ldd", str(program)], capture_output=True, text=True, env=env).stdout
    found = {}
    for line in out.splitlines():
        name, arrow, rest = line.strip().partition(" => ")
        if arrow:
            path = rest.split(" (")[0].strip()
            found[name] = path if path.startswith("/") else None
    return found


def cache_value(build, key):
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(key + ":"):
            return line.partition("=")[2]
    return "unknown"


def pack(build):
    build = pathlib.Path(build).resolve()
    if not (build / "CTestTestfile.cmake").exists():
        sys.exit(f"no CTestTestfile.cmake in {build}: build it first")
    programs = [p for p in build.rglob("*") if p.is_file() and os.access(p, os.X_OK)
                and "CMakeFiles" not in p.parts and is_elf(p)]
    tests = subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"], capture_output=True,
                           text=True, check=True).stdout
    # The tools of this machine the tests call (its nvcc, cuobjdump, python): absolute paths outside
    # the source tree. Where the GPU machine lacks one, the test cannot run there.
    tools = sorted({path for test in json.loads(tests)["tests"] for word in test.get("command", [])
                    for path in absolute_paths(word)
                    if not path.startswith(str(ROOT)) and os.path.exists(path)})
    carried, not_carried = {}, {}
    for program in programs:
        for name, path in loaded_libraries(program).items():
            if path and name.startswith(CUDA_LIBRARIES):
                if os.stat(path).st_size < SMALL:
                    carried[name] = path
                else:
                    not_carried[name] = os.stat(path).st_size >> 20
    version = next((line.split('"')[1] for f in (build / "CMakeFiles").glob("*/CMakeCUDACompiler.cmake")
                    for line in f.read_text().splitlines()
                    if line.startswith("set(CMAKE_CUDA_COMPILER_VERSION ")), "unknown")
    newest = max((p.stat().st_mtime for p in (build / "bin").iterdir()), default=0)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    if subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True).stdout:
        commit += " (with uncommitted changes)"
    info = {"nvcc": f"{cache_value(build, 'CMAKE_CUDA_COMPILER')} ({version})", "nvcc_version": version,
            "host compiler": cache_value(build, "CMAKE_CUDA_HOST_COMPILER"),
            "architectures": cache_value(build, "CMAKE_CUDA_ARCHITECTURES"),
            "built at commit": commit,
            "built on": datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "not carried": {name: f"{mib} MiB" for name, mib in not_carried.items()}}
    carry = build / "gpu-carry.tar.gz"
    with tempfile.TemporaryDirectory() as staging, tarfile.open(carry, "w:gz") as tar:
        staging = pathlib.Path(staging)
        (staging / "build-info.json").write_text(json.dumps(info, indent=1) + "\n")
        (staging / "build-machine-tests.json").write_text(tests)
        (staging / "build-machine-paths").write_text("".join(f"{t}\n" for t in tools))
        for name in ("build-info.json", "build-machine-tests.json", "build-machine-paths"):
            tar.add(staging / name, name)
        for name, path in carried.items():
            tar.add(os.path.realpath(path), f"carry-lib/{name}")  # the library, not its symlink
        for path in programs + list(build.rglob("CTestTestfile.cmake")):
            tar.add(path, str(path.relative_to(build)))
    print(f"wrote {carry} ({carry.stat().st_size >> 20} MiB): {len(programs)} programs, {len(carried)} libraries")
    for name, mib in not_carried.items():
        print(f"  not carried: {name} {mib} MiB")
    return 0


def selected(test):
    """Whether gpu-check.sh --prebuilt runs \\p test: labelled gpu, cli or host, not docs or record."""
    labels = next((p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"), [])
    return bool(set(labels) & {"gpu", "cli", "host"}) and not set(labels) & {"docs", "record"}


def prepare(build, logs, record):
    build, logs = pathlib.Path(build).resolve(), pathlib.Path(logs)
    logs.mkdir(parents=True, exist_ok=True)
    if (build / "gpu-carry.tar.gz").exists():
        with tarfile.open(build / "gpu-carry.tar.gz") as tar:
            tar.extractall(build)
    testfile = (build / "CTestTestfile.cmake").read_text().splitlines()
    recorded = {key: line.split(": ", 1)[1] for line in testfile
                for key in ("Source directory", "Build directory") if line.startswith(f"# {key}: ")}
    source = recorded["Source directory"]
    if source != str(ROOT) and not os.path.exists(source):
        os.makedirs(os.path.dirname(source), exist_ok=True)
        os.symlink(ROOT, source)
        print(f"linked {source} -> {ROOT} (the build's CTest files name it)")
    if os.path.realpath(recorded["Build directory"]) != str(build.resolve()):
        sys.exit(f"the CTest files of {build} name {recorded['Build directory']}, which is another folder here")

    tests_file = build / "build-machine-tests.json"
    tests = json.loads(tests_file.read_text() if tests_file.exists() else subprocess.run(
        ["ctest", "--test-dir", str(build), "--show-only=json-v1"], capture_output=True, text=True).stdout)
    tools = set((build / "build-machine-paths").read_text().split()) if (build / "build-machine-paths").exists() else set()
    for tool in sorted(tools):  # the build machine's Python (a venv's): this one's serves as well
        if os.path.basename(tool).startswith("python3") and not os.path.lexists(tool):
            os.makedirs(os.path.dirname(tool), exist_ok=True)
            os.symlink(sys.executable, tool)
            print(f"linked {tool} -> {sys.executable} (the build's CTest files name it)")
    library_path = f"{build / 'carry-lib'}:{os.environ.get('LD_LIBRARY_PATH', '')}"
    not_run = {}
    for test in tests["tests"]:
        if not selected(test):
            continue
        name, command = test["name"], test.get("command") or [""]
        for path in (p for word in command for p in absolute_paths(word)):
            if path in tools and not os.path.exists(path):
                not_run.setdefault(name, f"needs {path}, which the build machine has and this one does not")
            elif is_elf(path):
                missing = [lib for lib, where in loaded_libraries(path, library_path).items() if where is None]
                if missing:
                    not_run.setdefault(name, f"{os.path.basename(path)} loads {', '.join(missing)}, "
                                             "which this machine lacks")
        if command[0].startswith("/") and not os.path.exists(command[0]):
            not_run.setdefault(name, f"needs {command[0]}, which the build machine has and this one does not")
    (logs / "not-run.txt").write_text("".join(f"{name}\n" for name in sorted(not_run)))
    info = json.loads((build / "build-info.json").read_text())
    (logs / "build-nvcc").write_text(info.pop("nvcc_version"))
    not_carried = info.pop("not carried", {})
    if not_carried:
        info["not carried"] = ", ".join(f"{name} ({size})" for name, size in not_carried.items())
    extra = {"title": f"The CUDA {info['nvcc'].split('(')[-1].rstrip(')')} build on the GPU machine",
             "intro": "A build made on another machine, carried to the GPU machine and tested there by "
                      "`scripts/gpu-check.sh --prebuilt`: its tests labelled gpu, cli and host that this machine "
                      "can run, and (under Outputs) what chapter 04's programs of the build say the driver runs and, "
                      "where it found an nsys, chapter 05's nsys runs of the build. "
                      "The GPU runs the build's machine code for its own architecture, or its PTX; the build's "
                      "other architectures ran nowhere here.",
             "build": info, "not_run": sorted(not_run.items()),
             "outputs": [f"{record}_{program}" for program in OUTPUTS]}
    (logs / "extra.json").write_text(json.dumps(extra, indent=1) + "\n")
    print(f"{len(not_run)} tests need what only the build machine has (listed in the record)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "pack":
        sys.exit(pack(sys.argv[2]))
    if len(sys.argv) == 5 and sys.argv[1] == "prepare":
        sys.exit(prepare(*sys.argv[2:]))
    sys.exit(__doc__)
