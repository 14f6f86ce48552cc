# Chooses and validates the GPU architectures before CUDA is enabled.
#
# Include this file *before* project(... CUDA): CMake's CUDA compiler check
# already compiles with the architecture flags, so an architecture the toolkit
# cannot build would otherwise fail deep inside that check with nvcc's message.
#
#   - CMAKE_CUDA_ARCHITECTURES (or the CUDAARCHS environment variable) given:
#     honoured as given; entries the toolkit cannot build stop the configure
#     with one clear line.
#   - left unset: machine code for sm_70, sm_80 and sm_90 plus PTX of the newest
#     (so newer GPUs can JIT it), minus what this toolkit cannot build.

set(TUTORIAL_DEFAULT_CUDA_ARCHITECTURES 70 80 90)

# Finds nvcc the way CMake will (CMAKE_CUDA_COMPILER, then CUDACXX, then PATH).
function(_tutorial_find_nvcc out_var)
  if(CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  elseif(DEFINED ENV{CUDACXX})
    set(nvcc "$ENV{CUDACXX}")
  else()
    find_program(nvcc NAMES nvcc HINTS ENV CUDA_PATH ENV CUDA_HOME PATH_SUFFIXES bin
                 PATHS /usr/local/cuda/bin)
  endif()
  if(NOT nvcc OR NOT EXISTS "${nvcc}")
    message(FATAL_ERROR "nvcc not found: install a CUDA toolkit, put its bin/ on PATH "
                        "or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc.")
  endif()
  set(${out_var} "${nvcc}" PARENT_SCOPE)
endfunction()

# Sets <out_var> to the compute capabilities nvcc can build, e.g. "75;80;86;90;100".
function(_tutorial_supported_architectures nvcc out_var version_var)
  execute_process(COMMAND "${nvcc}" --list-gpu-arch
                  OUTPUT_VARIABLE arch_text RESULT_VARIABLE rc ERROR_QUIET)
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE version_text ERROR_QUIET)
  string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" _ "${version_text}")
  set(${version_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    # nvcc older than 11.x has no --list-gpu-arch: trust the user's list.
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  string(REGEX MATCHALL "compute_([0-9]+)" matches "${arch_text}")
  set(supported "")
  foreach(m IN LISTS matches)
    string(REPLACE "compute_" "" cc "${m}")
    list(APPEND supported "${cc}")
  endforeach()
  set(${out_var} "${supported}" PARENT_SCOPE)
endfunction()

# Stops with one line when this nvcc would build with parts of another toolkit.
# 1. nvcc runs ptxas, fatbinary and nvlink from the PATH its nvcc.profile sets. NVIDIA's
#    toolkits put their own bin/ first; Debian's package keeps those tools in /usr/bin, so a
#    toolkit earlier on PATH (/usr/local/cuda/bin) would lend nvcc 11.8 its ptxas.
# 2. Debian's headers are in /usr/include, which the host compiler searches after
#    /usr/local/include: another CUDA's headers there would replace the toolkit's own.
function(_tutorial_check_toolkit nvcc version)
  if(version AND version VERSION_LESS 11.8)
    message(FATAL_ERROR " nvcc ${version} (${nvcc}) is older than the course supports: "
                        "it needs CUDA 11.8 to 13.x.")
  endif()
  execute_process(COMMAND "${nvcc}" -dryrun -x cu -c /dev/null OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(out MATCHES "#\\$ PATH=([^\r\n]*)")
    string(REPLACE ":" ";" dirs "${CMAKE_MATCH_1}")
    find_program(ptxas NAMES ptxas PATHS ${dirs} NO_DEFAULT_PATH NO_CACHE)
    if(ptxas)
      execute_process(COMMAND "${ptxas}" --version OUTPUT_VARIABLE ptxas_text ERROR_QUIET)
      if(ptxas_text MATCHES "release ([0-9]+\\.[0-9]+)" AND NOT CMAKE_MATCH_1 VERSION_EQUAL version)
        message(FATAL_ERROR " nvcc ${version} would run ${ptxas}, which is CUDA ${CMAKE_MATCH_1}'s: put "
                            "the folder with nvcc ${version}'s ptxas first on PATH (Debian: /usr/bin).")
      endif()
    endif()
  endif()
  get_filename_component(bin "${nvcc}" DIRECTORY)
  get_filename_component(include "${bin}/../include" REALPATH)
  set(other /usr/local/include/cuda_runtime_api.h)
  if(include STREQUAL "/usr/include" AND EXISTS "${other}")
    file(STRINGS "${other}" line REGEX "^#define CUDART_VERSION +[0-9]+")
    string(REGEX MATCH "[0-9]+$" other_version "${line}")
    string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${version}")
    math(EXPR own_version "${CMAKE_MATCH_1} * 1000 + ${CMAKE_MATCH_2} * 10")
    if(other_version AND NOT other_version EQUAL own_version)
      message(FATAL_ERROR " ${other} (CUDART_VERSION ${other_version}) hides nvcc ${version}'s headers "
                          "in /usr/include: the compiler searches /usr/local/include first. Build where "
                          "it holds no other CUDA (docs/environment.md, 'A second toolkit').")
    endif()
  endif()
endfunction()

# Describes a CMake architecture list in words: which machine code, which PTX.
function(tutorial_describe_architectures archs out_var)
  set(sass "")
  set(ptx "")
  foreach(a IN LISTS archs)
    if(a MATCHES "^([0-9]+[af]?)-real$")
      list(APPEND sass "sm_${CMAKE_MATCH_1}")
    elseif(a MATCHES "^([0-9]+[af]?)-virtual$")
      list(APPEND ptx "compute_${CMAKE_MATCH_1}")
    elseif(a MATCHES "^([0-9]+[af]?)$")
      list(APPEND sass "sm_${CMAKE_MATCH_1}")
      list(APPEND ptx "compute_${CMAKE_MATCH_1}")
    endif()
  endforeach()
  list(JOIN sass ", " sass)
  list(JOIN ptx ", " ptx)
  if(sass STREQUAL "")
    set(sass "none")
  endif()
  if(ptx STREQUAL "")
    set(ptx "none")
  endif()
  set(${out_var} "machine code: ${sass}; PTX: ${ptx}" PARENT_SCOPE)
endfunction()

# tutorial_architectures_at_least(<cc> <out_var>): CMAKE_CUDA_ARCHITECTURES without the
# entries older than compute capability <cc>, for a program whose code needs newer GPUs (bf16
# tensor cores need 80). If nothing is left, PTX for <cc> alone: the program still builds, and
# on an older GPU it says that it holds no code for it.
function(tutorial_architectures_at_least min out_var)
  set(kept "")
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(NOT arch MATCHES "^([0-9]+)[af]?(-real|-virtual)?$" OR NOT CMAKE_MATCH_1 LESS min)
      list(APPEND kept "${arch}")
    endif()
  endforeach()
  if(NOT kept)
    set(kept "${min}-virtual")
  endif()
  set(${out_var} "${kept}" PARENT_SCOPE)
endfunction()

# A value this file chose on an earlier configure is still "the default", not the user's.
if(DEFINED TUTORIAL_DEFAULTED_CUDA_ARCHITECTURES
   AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${TUTORIAL_DEFAULTED_CUDA_ARCHITECTURES}")
  unset(CMAKE_CUDA_ARCHITECTURES CACHE)
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES "$ENV{CUDAARCHS}")
endif()

_tutorial_find_nvcc(_tutorial_nvcc)
_tutorial_supported_architectures("${_tutorial_nvcc}" _tutorial_supported _tutorial_cuda_version)
_tutorial_check_toolkit("${_tutorial_nvcc}" "${_tutorial_cuda_version}")
string(REPLACE ";" ", " _tutorial_supported_text "${_tutorial_supported}")

if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  # The user's knob: keep it exactly, but refuse what nvcc cannot build.
  set(_tutorial_source "as given")
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(arch MATCHES "^([0-9]+)[af]?(-real|-virtual)?$" AND _tutorial_supported)
      if(NOT CMAKE_MATCH_1 IN_LIST _tutorial_supported)
        # The leading space keeps CMake from re-wrapping the message: it stays one line.
        message(FATAL_ERROR
          " CMAKE_CUDA_ARCHITECTURES entry '${arch}' cannot be built by nvcc ${_tutorial_cuda_version} "
          "(it builds: ${_tutorial_supported_text}); sm_70 needs a CUDA 12 toolkit.")
      endif()
    elseif(arch STREQUAL "native")
      # CMake finds "native" by running a program on the GPU while it checks the compiler;
      # without one that fails in a page of errors. Say it in one line instead.
      execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _tutorial_smi OUTPUT_QUIET ERROR_QUIET)
      if(NOT _tutorial_smi EQUAL 0)
        message(FATAL_ERROR " CMAKE_CUDA_ARCHITECTURES=native needs a GPU at configure time, and "
                            "nvidia-smi sees none: name the architectures instead (e.g. 90, or all-major).")
      endif()
    elseif(NOT arch MATCHES "^(native|all|all-major|OFF)$" AND NOT arch MATCHES "^[0-9]+[af]?(-real|-virtual)?$")
      message(FATAL_ERROR " CMAKE_CUDA_ARCHITECTURES entry '${arch}' is not an architecture "
                          "(use e.g. 80, 90-real, 90-virtual, native, all-major).")
    endif()
  endforeach()
else()
  set(_tutorial_source "course default")
  set(_tutorial_kept "")
  foreach(cc IN LISTS TUTORIAL_DEFAULT_CUDA_ARCHITECTURES)
    if(NOT _tutorial_supported OR cc IN_LIST _tutorial_supported)
      list(APPEND _tutorial_kept "${cc}")
    else()
      message(STATUS
        "sm_${cc} left out: nvcc ${_tutorial_cuda_version} cannot build it (CUDA 13 dropped Volta, sm_70). "
        "For Volta GPUs configure with a CUDA 12 toolkit: -DCMAKE_CUDA_COMPILER=/usr/local/cuda-12/bin/nvcc")
    endif()
  endforeach()
  if(NOT _tutorial_kept)
    message(FATAL_ERROR "nvcc ${_tutorial_cuda_version} builds none of the course's default "
                        "architectures (${TUTORIAL_DEFAULT_CUDA_ARCHITECTURES}); set CMAKE_CUDA_ARCHITECTURES.")
  endif()
  # Machine code for each, PTX only for the newest: the PTX lets the driver JIT for newer GPUs.
  list(POP_BACK _tutorial_kept _tutorial_newest)
  list(TRANSFORM _tutorial_kept APPEND "-real")
  list(APPEND _tutorial_kept "${_tutorial_newest}")
  set(CMAKE_CUDA_ARCHITECTURES "${_tutorial_kept}" CACHE STRING
      "GPU architectures to build (CMake syntax: 80-real, 90, 90-virtual, native, all-major)")
  set(TUTORIAL_DEFAULTED_CUDA_ARCHITECTURES "${_tutorial_kept}" CACHE INTERNAL "")
endif()

if(NOT CMAKE_CUDA_COMPILER)
  # Use the nvcc whose architectures we just checked.
  set(CMAKE_CUDA_COMPILER "${_tutorial_nvcc}" CACHE FILEPATH "CUDA compiler")
endif()

tutorial_describe_architectures("${CMAKE_CUDA_ARCHITECTURES}" _tutorial_arch_words)
message(STATUS "GPU architectures (${_tutorial_source}): ${CMAKE_CUDA_ARCHITECTURES} -> ${_tutorial_arch_words}")
