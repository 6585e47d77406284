# DuetHip.cmake - the AMD backend: CMake's HIP language on a /opt/rocm install or Debian's ROCm.
#
# CMake 3.21-3.27 expects one ROCm tree: clang under <root>/llvm, the hip-lang package under
# <root>/lib/cmake/hip-lang and the device bitcode under <root>/amdgcn/bitcode. Debian and
# Ubuntu split that tree: hip-lang sits in the multiarch directory
# (/usr/lib/x86_64-linux-gnu/cmake/hip-lang), the bitcode in .../amdgcn/bitcode, and the HIP
# compiler is a versioned clang++-N beside an unrelated default clang++. This file bridges the
# two layouts before enable_language(HIP) and stays out of the way of a standard install.
#
# User-facing knobs (all optional):
#   CMAKE_HIP_ARCHITECTURES  the targets (CMake's own variable; "native": this machine's GPUs);
#                            GPU_TARGETS / AMDGPU_TARGETS are accepted as ROCm spells them.
#   DUET_HIP_ARCHS           used when none of those is given: empty or "native" (the default)
#                            builds for the GPUs of this machine, as rocm_agent_enumerator,
#                            offload-arch or amdgpu-arch report them; "all" builds the full
#                            list (gfx908;gfx90a;gfx942 or gfx940;gfx1030), for packages; or a
#                            list. Without a visible AMD GPU the default is the full list.
#   CMAKE_HIP_COMPILER       the clang++ to use (never hipcc); default: the clang hipcc drives.
#   CMAKE_HIP_COMPILER_ROCM_ROOT / ROCM_PATH   the ROCm prefix; default: hipconfig --rocmpath.
#   DUET_HIP_DEVICE_LIB_PATH the directory holding ocml.bc and the oclc_*.bc device libraries.

include_guard(GLOBAL)

# ---- 1. the ROCm prefix ---------------------------------------------------------------------
find_program(DUET_HIPCONFIG hipconfig HINTS "$ENV{ROCM_PATH}/bin" /opt/rocm/bin)
mark_as_advanced(DUET_HIPCONFIG)

function(_duet_hipconfig out flag)
  set(${out} "" PARENT_SCOPE)
  if(DUET_HIPCONFIG)
    execute_process(COMMAND "${DUET_HIPCONFIG}" ${flag} OUTPUT_VARIABLE v RESULT_VARIABLE rc
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 60)
    if(rc EQUAL 0)
      set(${out} "${v}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

if(CMAKE_HIP_COMPILER_ROCM_ROOT
   AND NOT "${CMAKE_HIP_COMPILER_ROCM_ROOT}" STREQUAL "${DUET_HIP_SHIM_ROOT}")
  set(_duet_rocm "${CMAKE_HIP_COMPILER_ROCM_ROOT}")
elseif(DUET_HIP_ROCM_PREFIX)
  set(_duet_rocm "${DUET_HIP_ROCM_PREFIX}")
elseif(NOT "$ENV{ROCM_PATH}" STREQUAL "")
  set(_duet_rocm "$ENV{ROCM_PATH}")
else()
  _duet_hipconfig(_duet_rocm --rocmpath)
  if(NOT _duet_rocm OR NOT EXISTS "${_duet_rocm}")
    set(_duet_rocm /opt/rocm)
  endif()
endif()
file(TO_CMAKE_PATH "${_duet_rocm}" _duet_rocm)
set(DUET_HIP_ROCM_PREFIX "${_duet_rocm}" CACHE INTERNAL "ROCm prefix the HIP backend uses")

# Where hip-lang really is: the standard tree, lib64, or the multiarch directory.
set(_duet_hiplang "")
foreach(d "${hip-lang_DIR}"
          "${_duet_rocm}/lib/cmake/hip-lang"
          "${_duet_rocm}/lib64/cmake/hip-lang"
          "${_duet_rocm}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/hip-lang")
  if(d AND EXISTS "${d}/hip-lang-config.cmake")
    set(_duet_hiplang "${d}")
    break()
  endif()
endforeach()
if(NOT _duet_hiplang)
  message(FATAL_ERROR
    "duet (BACKEND=hip): no hip-lang-config.cmake under the ROCm prefix '${_duet_rocm}'.\n"
    "Install ROCm (/opt/rocm) or, on Debian/Ubuntu, the packages hipcc libamdhip64-dev "
    "rocm-device-libs; or point -DCMAKE_HIP_COMPILER_ROCM_ROOT=<prefix> or "
    "-Dhip-lang_DIR=<dir> at it.")
endif()

# A distribution layout: hip-lang is not where CMake looks (<root>/lib/cmake). Give CMake a
# small forwarding tree in the build directory instead of touching the system.
set(_duet_distro_layout OFF)
if(NOT _duet_hiplang STREQUAL "${_duet_rocm}/lib/cmake/hip-lang")
  set(_duet_distro_layout ON)
  set(_duet_shim "${CMAKE_BINARY_DIR}/duet-hip-root")
  file(MAKE_DIRECTORY "${_duet_shim}/lib/cmake/hip-lang")
  # include() keeps CMAKE_CURRENT_LIST_DIR at the real package, so its prefix logic still works.
  # Its dependencies (amd_comgr, AMDDeviceLibs) live beside it; CMake's test projects enable
  # only HIP, know no library architecture and would not look there, so name the directory.
  get_filename_component(_duet_cmake_dir "${_duet_hiplang}" DIRECTORY)
  file(WRITE "${_duet_shim}/lib/cmake/hip-lang/hip-lang-config.cmake"
    "# Written by duet's DuetHip.cmake: forwards CMake's HIP lookup to the packaged hip-lang.\n"
    "set(_duet_saved_prefix_path \"\${CMAKE_PREFIX_PATH}\")\n"
    "list(APPEND CMAKE_PREFIX_PATH \"${_duet_cmake_dir}\" \"${_duet_rocm}\")\n"
    "include(\"${_duet_hiplang}/hip-lang-config.cmake\")\n"
    "set(CMAKE_PREFIX_PATH \"\${_duet_saved_prefix_path}\")\n"
    "unset(_duet_saved_prefix_path)\n"
    "# With the prefix /usr the package adds -isystem /usr/include, which puts the C headers\n"
    "# ahead of libstdc++'s <cmath> wrappers and breaks their #include_next; the compiler\n"
    "# searches /usr/include anyway.\n"
    "foreach(_duet_t hip-lang::device hip-lang::amdhip64)\n"
    "  foreach(_duet_p INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)\n"
    "    get_target_property(_duet_v \${_duet_t} \${_duet_p})\n"
    "    if(_duet_v)\n"
    "      string(REGEX REPLACE \"([:;])/usr/include(;/usr/include)*([;>])\" \"\\\\1\\\\3\" _duet_v \"\${_duet_v}\")\n"
    "      set_target_properties(\${_duet_t} PROPERTIES \${_duet_p} \"\${_duet_v}\")\n"
    "    endif()\n"
    "  endforeach()\n"
    "endforeach()\n"
    "unset(_duet_t)\nunset(_duet_p)\nunset(_duet_v)\n")
  if(EXISTS "${_duet_hiplang}/hip-lang-config-version.cmake")
    file(WRITE "${_duet_shim}/lib/cmake/hip-lang/hip-lang-config-version.cmake"
      "# Written by duet's DuetHip.cmake: the packaged hip-lang's version check.\n"
      "include(\"${_duet_hiplang}/hip-lang-config-version.cmake\")\n")
  endif()
  set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_duet_shim}" CACHE PATH
      "ROCm root for CMake's HIP support" FORCE)
  set(DUET_HIP_SHIM_ROOT "${_duet_shim}" CACHE INTERNAL "")
elseif(NOT CMAKE_HIP_COMPILER_ROCM_ROOT)
  set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_duet_rocm}" CACHE PATH "ROCm root for CMake's HIP support")
endif()

# ---- 2. the compiler: the clang++ hipcc itself drives ---------------------------------------
# CMake's default is plain "clang++" in hipconfig's clang directory; on Debian that is the
# distribution's default clang (14 on bookworm), not the clang-15 ROCm 5.2 was built against.
if(NOT CMAKE_HIP_COMPILER AND "$ENV{HIPCXX}" STREQUAL "")
  _duet_hipconfig(_duet_clang_dir --hipclangpath)
  set(_duet_clang_names clang++)
  find_program(DUET_HIPCC hipcc HINTS "${_duet_rocm}/bin" /opt/rocm/bin)
  mark_as_advanced(DUET_HIPCC)
  if(DUET_HIPCC)
    execute_process(COMMAND "${DUET_HIPCC}" --version OUTPUT_VARIABLE _duet_v ERROR_QUIET
                    RESULT_VARIABLE _duet_rc TIMEOUT 60)
    if(_duet_rc EQUAL 0 AND _duet_v MATCHES "clang version ([0-9]+)\\.")
      set(_duet_clang_names clang++-${CMAKE_MATCH_1} clang++)
    endif()
  endif()
  find_program(DUET_HIP_CLANG NAMES ${_duet_clang_names} NAMES_PER_DIR
               HINTS ${_duet_clang_dir} "${_duet_rocm}/llvm/bin" "${_duet_rocm}/lib/llvm/bin"
                     /opt/rocm/llvm/bin)
  mark_as_advanced(DUET_HIP_CLANG)
  if(DUET_HIP_CLANG)
    set(CMAKE_HIP_COMPILER "${DUET_HIP_CLANG}" CACHE FILEPATH "HIP compiler (clang++)")
  endif()
endif()

# ---- 3. the device libraries, and the flags a distribution clang needs ---------------------
# ocml.bc and the oclc_*.bc files: <root>/amdgcn/bitcode up to ROCm 6.1, inside the compiler's
# resource directory from 6.2 on, the multiarch directory on Debian.
if(NOT DUET_HIP_DEVICE_LIB_PATH)
  set(_duet_bc_dirs
    "${_duet_rocm}/amdgcn/bitcode"
    "${_duet_rocm}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/amdgcn/bitcode"
    "${_duet_rocm}/lib/amdgcn/bitcode"
    "${_duet_rocm}/lib64/amdgcn/bitcode")
  if(CMAKE_HIP_COMPILER)
    execute_process(COMMAND "${CMAKE_HIP_COMPILER}" -print-resource-dir
                    OUTPUT_VARIABLE _duet_res ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_duet_res)
      list(APPEND _duet_bc_dirs "${_duet_res}/lib/amdgcn/bitcode" "${_duet_res}/amdgcn/bitcode")
    endif()
  endif()
  set(_duet_bc "")
  foreach(d IN LISTS _duet_bc_dirs)
    if(EXISTS "${d}/ocml.bc")
      set(_duet_bc "${d}")
      break()
    endif()
  endforeach()
  set(_duet_bc_user OFF)
else()
  set(_duet_bc "${DUET_HIP_DEVICE_LIB_PATH}")
  set(_duet_bc_user ON)
endif()

set(DUET_HIP_TOOLCHAIN_FLAGS "")
if(_duet_distro_layout)
  if(NOT _duet_bc)
    message(FATAL_ERROR
      "duet (BACKEND=hip): the ROCm device libraries (ocml.bc) were not found under "
      "'${_duet_rocm}'. Install rocm-device-libs or set -DDUET_HIP_DEVICE_LIB_PATH=<dir>.")
  endif()
  # Debian ships no .hipVersion file for clang to read; without the version clang assumes
  # HIP 3.5. hipcc passes the same three flags.
  _duet_hipconfig(_duet_hipver --version)
  if(_duet_hipver MATCHES "^([0-9]+\\.[0-9]+\\.[0-9]+)")
    set(_duet_hipver "${CMAKE_MATCH_1}")
  else()
    include("${_duet_hiplang}/hip-lang-config-version.cmake" OPTIONAL)
    set(_duet_hipver "${PACKAGE_VERSION}")
    unset(PACKAGE_VERSION)
  endif()
  set(DUET_HIP_TOOLCHAIN_FLAGS "--rocm-path=${_duet_rocm} --rocm-device-lib-path=${_duet_bc}")
  if(_duet_hipver MATCHES "^[0-9]")
    string(APPEND DUET_HIP_TOOLCHAIN_FLAGS " --hip-version=${_duet_hipver}")
  endif()
elseif(_duet_bc_user)
  set(DUET_HIP_TOOLCHAIN_FLAGS "--rocm-device-lib-path=${_duet_bc}")
endif()
if(DUET_HIP_TOOLCHAIN_FLAGS)
  # A directory-scope variable, so CMake's compiler identification, its test project and every
  # HIP compile and link below see the flags, in front of whatever the user cached.
  set(CMAKE_HIP_FLAGS "${DUET_HIP_TOOLCHAIN_FLAGS} ${CMAKE_HIP_FLAGS}")
endif()

# ---- 4. target architectures ---------------------------------------------------------------
# Chosen before enable_language(HIP): without a value CMake asks rocm_agent_enumerator, and on a
# build machine without a GPU it falls back to the compiler's default (gfx803 or so), which
# duet does not support. By default duet builds for the GPUs of this machine (one device
# compile per kernel instead of four), else the full list: CDNA1 (MI100), CDNA2 (MI200), CDNA3
# and RDNA2. CDNA3
# is gfx942 (MI300X/MI300A as sold) where the toolchain has it (ROCm 5.7+); ROCm 5.2, as in
# Debian 12, knows only gfx940, the first MI300 silicon, and newer ROCm has dropped gfx940.
if(_duet_bc AND NOT EXISTS "${_duet_bc}/oclc_isa_version_942.bc")
  set(DUET_HIP_DEFAULT_ARCHITECTURES gfx908 gfx90a gfx940 gfx1030)
else()
  set(DUET_HIP_DEFAULT_ARCHITECTURES gfx908 gfx90a gfx942 gfx1030)
endif()
set(DUET_HIP_ARCHS "" CACHE STRING
    "AMD GPU targets for duet: empty or native (this machine's GPUs), all (the full list), or a list such as gfx90a;gfx942")

# The AMD GPUs of this machine (gfx names), empty when none is visible: the first tool that
# names one (gfx000 is rocm_agent_enumerator's CPU agent).
function(_duet_hip_detect_gpus out)
  find_program(DUET_ROCM_AGENT_ENUMERATOR rocm_agent_enumerator
               HINTS "$ENV{ROCM_PATH}/bin" "${_duet_rocm}/bin" /opt/rocm/bin)
  find_program(DUET_OFFLOAD_ARCH NAMES offload-arch amdgpu-arch
               HINTS "$ENV{ROCM_PATH}/bin" "${_duet_rocm}/bin" "${_duet_rocm}/llvm/bin"
                     /opt/rocm/bin /opt/rocm/llvm/bin)
  mark_as_advanced(DUET_ROCM_AGENT_ENUMERATOR DUET_OFFLOAD_ARCH)
  set(found "")
  foreach(tool IN ITEMS DUET_ROCM_AGENT_ENUMERATOR DUET_OFFLOAD_ARCH)
    if(${tool} AND NOT found)
      set(args "")
      if(tool STREQUAL "DUET_ROCM_AGENT_ENUMERATOR")
        set(args -t GPU)
      endif()
      execute_process(COMMAND "${${tool}}" ${args} OUTPUT_VARIABLE v RESULT_VARIABLE rc
                      ERROR_QUIET TIMEOUT 60)
      if(rc EQUAL 0)
        string(REGEX MATCHALL "gfx[0-9a-f]+" v "${v}")
        list(REMOVE_ITEM v gfx000)
        list(REMOVE_DUPLICATES v)
        set(found ${v})
      endif()
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The value is ours to (re)choose while it is empty or still what duet set last time, so a
# later -DGPU_TARGETS=... or -DDUET_HIP_ARCHS=... takes effect while an explicit
# -DCMAKE_HIP_ARCHITECTURES always wins.
if(NOT CMAKE_HIP_ARCHITECTURES
   OR (DEFINED DUET_HIP_ARCHITECTURES_CHOSEN
       AND "${CMAKE_HIP_ARCHITECTURES}" STREQUAL "${DUET_HIP_ARCHITECTURES_CHOSEN}"))
  string(TOLOWER "${DUET_HIP_ARCHS}" _duet_req)
  if(GPU_TARGETS)
    set(_duet_archs ${GPU_TARGETS})
    set(_duet_why "GPU_TARGETS")
  elseif(AMDGPU_TARGETS)
    set(_duet_archs ${AMDGPU_TARGETS})
    set(_duet_why "AMDGPU_TARGETS")
  elseif(_duet_req STREQUAL "all")
    set(_duet_archs ${DUET_HIP_DEFAULT_ARCHITECTURES})
    set(_duet_why "all (-DDUET_HIP_ARCHS=all)")
  elseif(_duet_req STREQUAL "" OR _duet_req STREQUAL "native")
    _duet_hip_detect_gpus(_duet_archs)
    if(_duet_archs)
      list(JOIN _duet_archs ", " _duet_list)
      set(_duet_why "native (${_duet_list} detected)")
    elseif(_duet_req STREQUAL "native")
      message(FATAL_ERROR "duet (BACKEND=hip): DUET_HIP_ARCHS=native, but no AMD GPU is visible "
                          "on this machine; name the targets, e.g. -DDUET_HIP_ARCHS=gfx90a, or "
                          "build them all with -DDUET_HIP_ARCHS=all.")
    else()
      set(_duet_archs ${DUET_HIP_DEFAULT_ARCHITECTURES})
      set(_duet_why "all (no AMD GPU visible on this machine; -DDUET_HIP_ARCHS=<list> or -DCMAKE_HIP_ARCHITECTURES=<list> builds fewer)")
    endif()
  else()
    set(_duet_archs ${DUET_HIP_ARCHS})
    set(_duet_why "chosen with -DDUET_HIP_ARCHS")
  endif()
  set(CMAKE_HIP_ARCHITECTURES "${_duet_archs}" CACHE STRING
      "AMD GPU targets (chosen by duet; see cmake/DuetHip.cmake)" FORCE)
  set(DUET_HIP_ARCHITECTURES_CHOSEN "${_duet_archs}" CACHE INTERNAL "")
  set(DUET_HIP_ARCHS_REASON "${_duet_why}" CACHE INTERNAL "")
elseif(NOT CMAKE_HIP_ARCHITECTURES STREQUAL "native")
  set(DUET_HIP_ARCHS_REASON "as given (CMAKE_HIP_ARCHITECTURES)" CACHE INTERNAL "")
  unset(DUET_HIP_ARCHITECTURES_CHOSEN CACHE)
endif()

# "native": the GPUs of this machine, as for CUDA. CMake documents the value for CUDA only, so
# ask the ROCm runtime here (gfx000 is the CPU agent).
if(CMAKE_HIP_ARCHITECTURES STREQUAL "native")
  _duet_hip_detect_gpus(_duet_native)
  if(NOT _duet_native)
    message(FATAL_ERROR "duet (BACKEND=hip): CMAKE_HIP_ARCHITECTURES=native, but no AMD GPU is "
                        "visible on this machine (rocm_agent_enumerator, offload-arch and "
                        "amdgpu-arch found none); name the targets, e.g. "
                        "-DCMAKE_HIP_ARCHITECTURES=\"gfx90a;gfx942\".")
  endif()
  list(JOIN _duet_native ", " _duet_list)
  set(DUET_HIP_ARCHS_REASON "native (${_duet_list} detected)" CACHE INTERNAL "")
  unset(DUET_HIP_ARCHITECTURES_CHOSEN CACHE)
  set(CMAKE_HIP_ARCHITECTURES "${_duet_native}")
endif()
set(DUET_HIP_ARCHS_SUMMARY "${DUET_HIP_ARCHS_REASON}: ${CMAKE_HIP_ARCHITECTURES}")
message(STATUS "duet: HIP architectures: ${DUET_HIP_ARCHS_SUMMARY}")

# A target missing from the device libraries fails late and obscurely (clang: "cannot find
# ROCm device library for gfx1100"); say which targets this ROCm lacks while configuring.
if(_duet_bc)
  set(_duet_missing "")
  foreach(a IN LISTS CMAKE_HIP_ARCHITECTURES)
    string(REGEX REPLACE ":.*$" "" a "${a}")
    string(REGEX REPLACE "^gfx" "" n "${a}")
    if(NOT EXISTS "${_duet_bc}/oclc_isa_version_${n}.bc")
      list(APPEND _duet_missing ${a})
    endif()
  endforeach()
  if(_duet_missing)
    message(FATAL_ERROR
      "duet (BACKEND=hip): this ROCm has no device library for ${_duet_missing} "
      "(no oclc_isa_version_*.bc in ${_duet_bc}). gfx942 and gfx1100 need ROCm 5.7 or "
      "later, and recent ROCm has dropped gfx940; choose others with "
      "-DCMAKE_HIP_ARCHITECTURES=\"gfx90a;gfx1030\".")
  endif()
endif()

enable_language(HIP)

# ---- 6. the backend -------------------------------------------------------------------------
# Each kernel family compiles in a translation unit of its own, so builds parallelise.
# The same units as the CUDA backend's (cmake/DuetCuda.cmake, src/gpu/gpu_internal.h).
target_sources(duet PRIVATE
  src/hip/backend_hip.hip src/hip/module_hip.hip src/hip/ops_hip.hip
  src/hip/gemm_fast_f32.hip src/hip/gemm_fast_f64.hip src/hip/gemm_fast_i32.hip
  src/hip/gemm_lowp.hip src/hip/gemm_skinny.hip src/hip/transpose_inplace.hip
  src/hip/gemm_epilogue.hip src/hip/convert.hip)
target_compile_definitions(duet PRIVATE DUET_BACKEND_HIP=1)
target_include_directories(duet PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/kernels ${CMAKE_CURRENT_SOURCE_DIR}/src)
# duet was created before the HIP language existed, so its HIP properties were initialised
# from empty variables; set them here.
set_target_properties(duet PROPERTIES
  HIP_ARCHITECTURES "${CMAKE_HIP_ARCHITECTURES}"
  HIP_STANDARD 17 HIP_STANDARD_REQUIRED ON HIP_EXTENSIONS OFF)
# Device code at -O0 spills everything to scratch and is no use even for debugging duet's
# results; nvcc optimises device code whatever the host flags say, so match it.
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  target_compile_options(duet PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-O3>)
endif()

# A static libduet has CMake link its C consumers (the tests, the examples) with the HIP driver,
# which then warns that the --offload-arch flags have no device code to go to.
get_target_property(_duet_type duet TYPE)
if(_duet_type STREQUAL "STATIC_LIBRARY")
  target_link_options(duet INTERFACE $<$<LINK_LANGUAGE:HIP>:-Wno-unused-command-line-argument>)
endif()

# The HIP language already links the runtime into libduet (hip-lang::device). Naming the library
# file as well puts it in the link interface a static libduet exports, so C programs linking
# that archive get it without any HIP package (ROCm's hip-config.cmake needs a C++ compiler,
# which a C consumer, and duet itself, need not enable).
find_library(DUET_AMDHIP64_LIBRARY amdhip64
  HINTS "${_duet_rocm}/lib" "${_duet_rocm}/lib64" "${_duet_rocm}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
mark_as_advanced(DUET_AMDHIP64_LIBRARY)
if(DUET_AMDHIP64_LIBRARY)
  target_link_libraries(duet PRIVATE ${DUET_AMDHIP64_LIBRARY})
endif()

# hiprtc (duet_module_create): inside libamdhip64 up to ROCm 5.2, its own libhiprtc from 5.3.
find_library(DUET_HIPRTC_LIBRARY hiprtc
  HINTS "${_duet_rocm}/lib" "${_duet_rocm}/lib64" "${_duet_rocm}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
mark_as_advanced(DUET_HIPRTC_LIBRARY)
if(DUET_HIPRTC_LIBRARY)
  target_link_libraries(duet PRIVATE ${DUET_HIPRTC_LIBRARY})
endif()

message(STATUS "duet HIP: compiler ${CMAKE_HIP_COMPILER} (${CMAKE_HIP_COMPILER_VERSION}), "
               "ROCm ${_duet_rocm}, targets ${CMAKE_HIP_ARCHITECTURES}")
if(DUET_HIP_TOOLCHAIN_FLAGS)
  message(STATUS "duet HIP: distribution layout, adding ${DUET_HIP_TOOLCHAIN_FLAGS}")
endif()
