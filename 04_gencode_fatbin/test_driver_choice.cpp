// Unit tests of driver_choice.hpp: the rules chapter 04's programs use to say
// which code the driver runs. Host-only, so they run in CI without a GPU.
#include "driver_choice.hpp"

#include "catch.hpp"

using ch04::Choice;
using ch04::choose;
using ch04::Embedded;

TEST_CASE("machine code runs only on its own major version, same or newer minor") {
  CHECK(ch04::machine_code_runs_on(80, 80));
  CHECK(ch04::machine_code_runs_on(80, 86));
  CHECK(ch04::machine_code_runs_on(86, 89));
  CHECK_FALSE(ch04::machine_code_runs_on(86, 80));   // newer minor than the GPU
  CHECK_FALSE(ch04::machine_code_runs_on(80, 90));   // an A100 cubin on an H100
  CHECK_FALSE(ch04::machine_code_runs_on(90, 100));  // an H100 cubin on a B200
}

TEST_CASE("the driver prefers machine code, then JIT-compiles the newest PTX it can") {
  const Embedded fatbin{{80, 90}, {90}};
  Choice c = choose(fatbin, 90, false);
  CHECK(c.kind == Choice::Kind::kMachineCode);
  CHECK(c.arch == 90);
  c = choose(fatbin, 86, false);  // sm_80 runs on 8.6
  CHECK(c.kind == Choice::Kind::kMachineCode);
  CHECK(c.arch == 80);
  c = choose(fatbin, 100, false);  // a B200: no cubin fits, compute_90 PTX does
  CHECK(c.kind == Choice::Kind::kJitFromPtx);
  CHECK(c.arch == 90);
  c = choose(fatbin, 75, false);  // a T4: everything here is too new
  CHECK(c.kind == Choice::Kind::kNothing);

  const Embedded nvcc_default{{75}, {75}};
  c = choose(nvcc_default, 90, false);
  CHECK(c.kind == Choice::Kind::kJitFromPtx);
  CHECK(c.arch == 75);

  const Embedded several_ptx{{}, {75, 80, 90}};
  c = choose(several_ptx, 89, false);
  CHECK(c.kind == Choice::Kind::kJitFromPtx);
  CHECK(c.arch == 80);
}

TEST_CASE("without PTX a cubin for an older major version is no use") {
  const Embedded gencode_sm80{{80}, {}};  // -gencode arch=compute_80,code=sm_80
  CHECK(choose(gencode_sm80, 80, false).kind == Choice::Kind::kMachineCode);
  CHECK(choose(gencode_sm80, 90, false).kind == Choice::Kind::kNothing);
  const Embedded with_ptx{{80}, {80}};  // code=[sm_80,compute_80]
  CHECK(choose(with_ptx, 90, false).kind == Choice::Kind::kJitFromPtx);
}

TEST_CASE("CUDA_FORCE_PTX_JIT=1 ignores machine code") {
  const Embedded cubin_only{{90}, {}};
  CHECK(choose(cubin_only, 90, false).kind == Choice::Kind::kMachineCode);
  CHECK(choose(cubin_only, 90, true).kind == Choice::Kind::kNothing);
  const Embedded fatbin{{90}, {90}};
  const Choice c = choose(fatbin, 90, true);
  CHECK(c.kind == Choice::Kind::kJitFromPtx);
  CHECK(c.arch == 90);
}

TEST_CASE("cudaFuncGetAttributes must agree with the choice") {
  const Choice machine{Choice::Kind::kMachineCode, 80};
  CHECK(ch04::attributes_agree(machine, 86, 80, 80));
  CHECK_FALSE(ch04::attributes_agree(machine, 86, 86, 80));  // that would be a JIT for 8.6
  const Choice jit{Choice::Kind::kJitFromPtx, 75};
  CHECK(ch04::attributes_agree(jit, 90, 90, 75));
  CHECK_FALSE(ch04::attributes_agree(jit, 90, 75, 75));
  CHECK_FALSE(ch04::attributes_agree(Choice{}, 90, 90, 90));
}

TEST_CASE("the attributes alone tell a cubin from a JIT only for another architecture") {
  CHECK(ch04::origin(80, 86, false) == ch04::Origin::kBinary);  // a JIT would give 86
  CHECK(ch04::origin(90, 90, false) == ch04::Origin::kBinaryOrJit);
  CHECK(ch04::origin(90, 90, true) == ch04::Origin::kJit);
}

TEST_CASE("--embeds reads the names cuobjdump gives") {
  Embedded e;
  std::string error;
  REQUIRE(ch04::parse_embedded("sm_80,sm_90,compute_90", e, error));
  CHECK(e.machine_code == std::vector<int>{80, 90});
  CHECK(e.ptx == std::vector<int>{90});
  REQUIRE(ch04::parse_embedded("compute_75", e, error));
  CHECK(e.machine_code.empty());
  CHECK(e.ptx == std::vector<int>{75});
  for (const char* bad : {"", "90", "sm_", "sm_90,", "sm_9x", "ptx_90", "sm_90 compute_90", "sm_12345"}) {
    CAPTURE(bad);
    CHECK_FALSE(ch04::parse_embedded(bad, e, error));
    CHECK(error.find("is not sm_XY") != std::string::npos);
  }
}

TEST_CASE("architecture lists are written as the tools write them") {
  CHECK(ch04::list_architectures({80, 90}, "sm_") == "sm_80, sm_90");
  CHECK(ch04::list_architectures({}, "compute_") == "none");
}
