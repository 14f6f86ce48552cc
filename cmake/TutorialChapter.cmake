# tutorial_add_chapter(): one call per chapter creates its program, its CTest
# verification and its runs in the GPU check (CTest labels sanitize and benchmark).
#
#   tutorial_add_chapter(<target>
#     SOURCES        <files>...      # the chapter's .cu/.cpp files
#     [LIBRARIES     <targets>...]   # e.g. CUDA::cublas
#     [VERIFY_ARGS   <args>...]      # arguments for the verification test
#     [SANITIZE_ARGS <args>...]      # arguments for compute-sanitizer runs (keep them small)
#     [NO_SANITIZE   <reason>]       # no sanitizer runs: a program with no kernels of its own
#     [BENCHMARK_ARGS <args>...])    # arguments for the benchmark run; omit for no benchmark
#
# The verification test's verdict is the program's exit code (0: every check passed), and its
# last line, "SUMMARY {json}", must agree (cmake/verify_output.sh); exit code 77 (no GPU) makes
# it *skipped*. "Max error:" lines are for the reader: a check with a tolerance may print a
# non-zero one and pass.

set(TUTORIAL_SCRIPTS_DIR ${CMAKE_CURRENT_LIST_DIR})

option(TUTORIAL_GPU_CHECK "Register the GPU check's sanitizer and benchmark runs as CTest tests" OFF)
set(TUTORIAL_RESULTS_DIR ${PROJECT_SOURCE_DIR}/docs/results CACHE PATH
    "Where the GPU check's benchmark runs write their record")
if(TUTORIAL_GPU_CHECK)
  find_program(TUTORIAL_COMPUTE_SANITIZER compute-sanitizer HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)  # scripts/results.py records the benchmarks
endif()

function(tutorial_add_chapter target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NO_SANITIZE"
                        "SOURCES;LIBRARIES;VERIFY_ARGS;SANITIZE_ARGS;BENCHMARK_ARGS")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "tutorial_add_chapter(${target}): SOURCES is required")
  endif()
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE tutorial::common tutorial::warnings ${arg_LIBRARIES})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)

  tutorial_add_verification(${target} NAME verify ARGS ${arg_VERIFY_ARGS})
  if(NOT arg_NO_SANITIZE)
    tutorial_add_gpu_command(sanitize ${target} $<TARGET_FILE:${target}> ${arg_SANITIZE_ARGS})
  elseif(arg_SANITIZE_ARGS)
    message(FATAL_ERROR "tutorial_add_chapter(${target}): SANITIZE_ARGS and NO_SANITIZE exclude each other")
  endif()
  if(DEFINED arg_BENCHMARK_ARGS OR "BENCHMARK_ARGS" IN_LIST arg_KEYWORDS_MISSING_VALUES)
    tutorial_add_gpu_command(benchmark ${target} $<TARGET_FILE:${target}> ${arg_BENCHMARK_ARGS})
  endif()
endfunction()

# tutorial_add_verification(<target> NAME <suffix> [ARGS <args>...])
# Another verified run of a chapter program, e.g. at an odd size.
function(tutorial_add_verification target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME" "ARGS")
  add_test(NAME ${target}.${arg_NAME}
           COMMAND bash ${TUTORIAL_SCRIPTS_DIR}/verify_output.sh $<TARGET_FILE:${target}> ${arg_ARGS})
  set_tests_properties(${target}.${arg_NAME} PROPERTIES SKIP_RETURN_CODE 77 LABELS "gpu;verify")
endfunction()

# tutorial_add_usage_test(<target> NAME <suffix> ARGS <args>... [EXIT_CODE <n>] OUTPUT <regex>)
# A run that must be refused: exit code EXIT_CODE (default 2) and output matching OUTPUT.
# Options are checked before the GPU is touched, so these run without a GPU.
function(tutorial_add_usage_test target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;EXIT_CODE;OUTPUT" "ARGS")
  if(NOT DEFINED arg_EXIT_CODE)
    set(arg_EXIT_CODE 2)
  endif()
  add_test(NAME ${target}.${arg_NAME}
           COMMAND bash ${TUTORIAL_SCRIPTS_DIR}/expect_exit.sh ${arg_EXIT_CODE} "${arg_OUTPUT}"
                   $<TARGET_FILE:${target}> ${arg_ARGS})
  set_tests_properties(${target}.${arg_NAME} PROPERTIES SKIP_RETURN_CODE 77 LABELS "cli")
endfunction()

# tutorial_add_gpu_command(<kind> <name> <command>...)
# A run for the GPU check (scripts/gpu-check.sh), registered as CTest tests:
#   sanitize:  <name>.sanitize.<tool> for memcheck, racecheck, initcheck and synccheck,
#              label "sanitize" (run them with `ctest -L sanitize -j4`);
#   benchmark: <name>.benchmark, label "benchmark", run one at a time; scripts/results.py
#              keeps the run as data in ${TUTORIAL_RESULTS_DIR}/data/<name>.json (command,
#              exit status, where and when, the SUMMARY lines it printed, if any) and
#              <name>.output.txt, and renders ${TUTORIAL_RESULTS_DIR}/<name>.md, the page the
#              READMEs quote. Any command works: a program, a script, a Python demo.
# Both exist only when the build is configured with -DTUTORIAL_GPU_CHECK=ON (the GPU
# check does this), so a plain `ctest` never runs a sanitizer or a benchmark.
function(tutorial_add_gpu_command kind name)
  if(NOT TUTORIAL_GPU_CHECK)
    return()
  endif()
  if(kind STREQUAL "sanitize")
    foreach(tool IN ITEMS memcheck racecheck initcheck synccheck)
      add_test(NAME ${name}.sanitize.${tool}
               COMMAND ${TUTORIAL_COMPUTE_SANITIZER} --tool ${tool} --error-exitcode 99
                       --print-limit 20 ${ARGN}
               WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
      set_tests_properties(${name}.sanitize.${tool} PROPERTIES LABELS "sanitize" TIMEOUT 300)
    endforeach()
  elseif(kind STREQUAL "benchmark")
    add_test(NAME ${name}.benchmark
             COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/results.py record ${name}
                     --results ${TUTORIAL_RESULTS_DIR} -- ${ARGN}
             WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    # Timings need the GPU to themselves.
    # Exit 77 (no GPU, no ncu): skipped, and the record says so; the last record stays.
    set_tests_properties(${name}.benchmark PROPERTIES LABELS "benchmark" RUN_SERIAL TRUE TIMEOUT 600
                         SKIP_RETURN_CODE 77)
  else()
    message(FATAL_ERROR "tutorial_add_gpu_command: kind must be sanitize or benchmark, not '${kind}'")
  endif()
endfunction()

# tutorial_add_unit_test(<name> SOURCES <files>... [LIBRARIES <targets>...] [TEST_NAME <ctest name>])
# A Catch2 test of host-side logic (no GPU), labelled "host". Sources include
# "catch.hpp" (tests/catch.hpp), which picks Catch2 v2 or v3. Without Catch2 the
# test is not built, and configure says so once.
function(tutorial_add_unit_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TEST_NAME" "SOURCES;LIBRARIES")
  if(NOT BUILD_TESTING)
    return()
  endif()
  find_package(Catch2 QUIET)
  if(NOT Catch2_FOUND)
    get_property(warned GLOBAL PROPERTY TUTORIAL_CATCH2_WARNED)
    if(NOT warned)
      message(WARNING "Catch2 not found: unit tests are not built (Debian: apt-get install catch2).")
      set_property(GLOBAL PROPERTY TUTORIAL_CATCH2_WARNED TRUE)
    endif()
    return()
  endif()
  if(NOT arg_TEST_NAME)
    set(arg_TEST_NAME ${name})
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE Catch2::Catch2WithMain tutorial::warnings ${arg_LIBRARIES})
  target_compile_features(${name} PRIVATE cxx_std_17)
  add_test(NAME ${arg_TEST_NAME} COMMAND ${name})
  set_tests_properties(${arg_TEST_NAME} PROPERTIES LABELS "host")
endfunction()
