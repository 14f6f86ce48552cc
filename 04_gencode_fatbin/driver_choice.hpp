// Which code the CUDA driver runs, given what a binary embeds and the GPU.
//
// Host-only C++, so the rules are unit-tested without a GPU (test_driver_choice.cpp).
// Architectures are written as numbers, 10 * major + minor: 90 is sm_90 machine
// code or compute_90 PTX, and a compute capability 9.0 GPU.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace ch04 {

/// What one build of the program holds, as `cuobjdump --list-elf --list-ptx` lists it.
struct Embedded {
  std::vector<int> machine_code;  ///< sm_XY cubins
  std::vector<int> ptx;           ///< compute_XY PTX
};

/// The code the driver loads for one kernel.
struct Choice {
  enum class Kind { kMachineCode, kJitFromPtx, kNothing };
  Kind kind = Kind::kNothing;
  int arch = 0;  ///< the sm_XY it loads, or the compute_XY it JIT-compiles
};

/// Machine code for sm_XY runs only on GPUs of the same major version X and a
/// minor version of at least Y: sm_80 runs on 8.0, 8.6 and 8.9, never on 9.0.
inline bool machine_code_runs_on(int sm, int compute_capability) {
  return sm / 10 == compute_capability / 10 && sm <= compute_capability;
}

/// PTX for compute_XY can be JIT-compiled for any GPU of compute capability X.Y
/// or newer (by a driver at least as new as the toolkit that wrote it).
inline bool ptx_runs_on(int compute, int compute_capability) { return compute <= compute_capability; }

/// What cudaFuncGetAttributes() alone tells about where the code that runs came from.
/// A JIT always compiles for the GPU's own architecture, so machine code for another one
/// came in the binary; code for this very GPU may be either (the attributes read the same).
enum class Origin { kBinary, kJit, kBinaryOrJit };
inline Origin origin(int binary_version, int compute_capability, bool force_ptx_jit) {
  if (force_ptx_jit) return Origin::kJit;
  return binary_version == compute_capability ? Origin::kBinaryOrJit : Origin::kBinary;
}

/// The driver's rule: machine code that runs on this GPU if there is any (the
/// newest such), else the newest PTX it can JIT-compile, else nothing. With
/// CUDA_FORCE_PTX_JIT=1 it ignores machine code altogether.
inline Choice choose(const Embedded& embedded, int compute_capability, bool force_ptx_jit) {
  Choice choice;
  if (!force_ptx_jit) {
    for (int sm : embedded.machine_code)
      if (machine_code_runs_on(sm, compute_capability) && sm > choice.arch)
        choice = {Choice::Kind::kMachineCode, sm};
    if (choice.kind == Choice::Kind::kMachineCode) return choice;
  }
  for (int compute : embedded.ptx)
    if (ptx_runs_on(compute, compute_capability) && compute > choice.arch)
      choice = {Choice::Kind::kJitFromPtx, compute};
  return choice;
}

/// What cudaFuncGetAttributes() must report for \p choice: binaryVersion is the
/// machine code that runs (for JIT: this GPU's own), and after a JIT, ptxVersion
/// is the PTX it came from. (For a cubin, ptxVersion is the virtual architecture
/// nvcc compiled it through, which the binary does not list separately.)
inline bool attributes_agree(const Choice& choice, int compute_capability, int binary_version,
                             int ptx_version) {
  switch (choice.kind) {
    case Choice::Kind::kMachineCode:
      return binary_version == choice.arch;
    case Choice::Kind::kJitFromPtx:
      return binary_version == compute_capability && ptx_version == choice.arch;
    default:
      return false;
  }
}

/// Reads a list such as "sm_80,sm_90,compute_90" (the names cuobjdump gives, PTX
/// written compute_XY) into \p embedded. False, with \p error set, for anything else.
inline bool parse_embedded(const std::string& text, Embedded& embedded, std::string& error) {
  embedded = {};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const bool cubin = item.rfind("sm_", 0) == 0, ptx = item.rfind("compute_", 0) == 0;
    const std::string digits = item.substr(cubin ? 3 : ptx ? 8 : 0);
    if (!(cubin || ptx) || digits.empty() || digits.size() > 3 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      error = "'" + item + "' is not sm_XY (machine code) or compute_XY (PTX), e.g. sm_90,compute_90";
      return false;
    }
    (cubin ? embedded.machine_code : embedded.ptx).push_back(std::stoi(digits));
    start = comma + 1;
  }
  return true;
}

/// "sm_80, sm_90" (or "none") for a list of architectures.
inline std::string list_architectures(const std::vector<int>& archs, const char* prefix) {
  std::string text;
  for (int arch : archs) text += (text.empty() ? "" : ", ") + (prefix + std::to_string(arch));
  return text.empty() ? "none" : text;
}

}  // namespace ch04
