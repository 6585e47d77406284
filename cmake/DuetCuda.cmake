# DuetCuda.cmake - the CUDA backend: language and architectures, the CUDA runtime, the sources.
#
# Architectures, the first of these that is given:
#   -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable): used as given.
#   -DDUET_CUDA_ARCHS=all    the full list below, for packages that must run on any GPU.
#   -DDUET_CUDA_ARCHS=<list> that list, e.g. "80-real;90-real".
#   nothing (or -DDUET_CUDA_ARCHS=native): the GPUs of this machine, as nvidia-smi reports their
#            compute capability (sm_90 on an H100 or H200), machine code only: one device
#            compile per kernel instead of six. A GPU newer than the toolkit gets the PTX of the
#            newest architecture the toolkit has, which the driver compiles at load time. On a
#            machine where no NVIDIA GPU is visible (a build machine, a container without the
#            GPU), the full list, and the configure summary says so.
# The full list ("all"):
#   70-real  Volta (V100), only with toolkits before CUDA 13, which dropped sm_70/sm_72
#            (`nvcc --list-gpu-arch` of CUDA 13.0 starts at compute_75)
#   75-real  Turing (T4, RTX 20xx)
#   80-real  Ampere A100 / A30
#   86-real  Ampere consumer and workstation (RTX 30xx, A10, A40)
#   89-real  Ada (L4, L40, RTX 40xx)
#   90-real  Hopper (H100, H200): machine code, so no JIT at start-up on the main target
#   90-virtual  PTX of the newest architecture in the list, which the driver compiles for GPUs
#            newer than any listed (Blackwell sm_100/sm_120 and later)
# sm_87 (Jetson Orin) and sm_72 (Xavier) run the PTX of the nearest lower entry only if the
# driver JITs it; embedded builds should name their architecture. Each real entry costs a full
# device compile of every kernel, so iterate with -DCMAKE_CUDA_ARCHITECTURES=90.
# Whenever the list holds an sm_90 entry the Hopper kernels are also built for sm_90a (below).
set(DUET_CUDA_ARCHS "" CACHE STRING
    "CUDA architectures for duet: empty or native (this machine's GPUs), all (the full list), or a list such as 80-real;90-real")
option(DUET_CUDA_STATIC_RUNTIME "Link the CUDA runtime statically (no libcudart.so needed at run time)" ON)

include(CheckLanguage)
check_language(CUDA)

# The compute capabilities (as "90") of this machine's NVIDIA GPUs, empty when none is visible.
function(_duet_cuda_detect_gpus out)
  set(caps "")
  find_program(DUET_NVIDIA_SMI nvidia-smi)
  if(DUET_NVIDIA_SMI)
    execute_process(COMMAND "${DUET_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE v RESULT_VARIABLE rc ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" v "${v}")
      foreach(c IN LISTS v)
        string(REPLACE "." "" c "${c}")
        list(APPEND caps ${c})
      endforeach()
      list(REMOVE_DUPLICATES caps)
    endif()
  endif()
  set(${out} "${caps}" PARENT_SCOPE)
endfunction()

# The architectures this nvcc compiles for (as "90"), empty if it cannot say.
function(_duet_cuda_known_archs out)
  set(archs "")
  if(CMAKE_CUDA_COMPILER)
    execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-code OUTPUT_VARIABLE v
                    RESULT_VARIABLE rc ERROR_QUIET TIMEOUT 60)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "sm_[0-9]+" v "${v}")
      foreach(a IN LISTS v)
        string(REPLACE "sm_" "" a "${a}")
        list(APPEND archs ${a})
      endforeach()
    endif()
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# The full list for this nvcc's version (known before enable_language from `nvcc --version`).
function(_duet_cuda_all_archs out)
  set(ver "")
  if(CMAKE_CUDA_COMPILER_VERSION)
    set(ver "${CMAKE_CUDA_COMPILER_VERSION}")
  elseif(CMAKE_CUDA_COMPILER)
    execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --version OUTPUT_VARIABLE v ERROR_QUIET
                    TIMEOUT 60)
    if(v MATCHES "release ([0-9]+\\.[0-9]+)")
      set(ver "${CMAKE_MATCH_1}")
    endif()
  endif()
  if(ver AND ver VERSION_LESS 13.0)
    set(${out} "70-real;75-real;80-real;86-real;89-real;90-real;90-virtual" PARENT_SCOPE)
  else()
    set(${out} "75-real;80-real;86-real;89-real;90-real;90-virtual" PARENT_SCOPE)
  endif()
endfunction()

# The value is ours to (re)choose while it is unset or still what duet chose last time, so a
# later -DDUET_CUDA_ARCHS=... takes effect while an explicit -DCMAKE_CUDA_ARCHITECTURES wins.
set(_duet_cuda_ours FALSE)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND "$ENV{CUDAARCHS}" STREQUAL "")
  set(_duet_cuda_ours TRUE)
elseif(DEFINED DUET_CUDA_ARCHITECTURES_CHOSEN
       AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${DUET_CUDA_ARCHITECTURES_CHOSEN}")
  set(_duet_cuda_ours TRUE)
else()
  # A build directory configured by an earlier duet, which cached its default list with this
  # description: the new default applies there too.
  get_property(_duet_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(_duet_help STREQUAL "CUDA architectures (duet's default list; see cmake/DuetCuda.cmake)")
    set(_duet_cuda_ours TRUE)
  endif()
endif()

if(_duet_cuda_ours)
  string(TOLOWER "${DUET_CUDA_ARCHS}" _duet_req)
  if(_duet_req STREQUAL "all")
    _duet_cuda_all_archs(_duet_archs)
    set(_duet_why "all (-DDUET_CUDA_ARCHS=all)")
  elseif(_duet_req STREQUAL "" OR _duet_req STREQUAL "native")
    _duet_cuda_detect_gpus(_duet_caps)
    if(NOT _duet_caps)
      if(_duet_req STREQUAL "native")
        message(FATAL_ERROR "duet (BACKEND=cuda): DUET_CUDA_ARCHS=native, but nvidia-smi shows no "
                            "NVIDIA GPU on this machine; name the architectures, e.g. "
                            "-DDUET_CUDA_ARCHS=90-real, or build them all with -DDUET_CUDA_ARCHS=all.")
      endif()
      _duet_cuda_all_archs(_duet_archs)
      set(_duet_why "all (no NVIDIA GPU visible on this machine; -DDUET_CUDA_ARCHS=<list> or -DCMAKE_CUDA_ARCHITECTURES=<list> builds fewer)")
    else()
      _duet_cuda_known_archs(_duet_known)
      set(_duet_archs "")
      set(_duet_sms "")
      foreach(c IN LISTS _duet_caps)
        list(APPEND _duet_sms "sm_${c}")
        if(NOT _duet_known OR c IN_LIST _duet_known)
          list(APPEND _duet_archs "${c}-real")
          continue()
        endif()
        # Not in this toolkit: newer GPUs run the PTX of the newest architecture it has; an
        # older one (sm_70 on CUDA 13) cannot run anything it builds.
        set(_duet_below "")
        foreach(k IN LISTS _duet_known)
          if(k LESS c AND (NOT _duet_below OR k GREATER _duet_below))
            set(_duet_below ${k})
          endif()
        endforeach()
        if(_duet_below)
          list(APPEND _duet_archs "${_duet_below}-virtual")
          message(STATUS "duet: nvcc ${CMAKE_CUDA_COMPILER} has no sm_${c}; building PTX of "
                         "compute_${_duet_below} for it (compiled by the driver at load time)")
        else()
          message(WARNING "duet: this GPU (sm_${c}) is older than any architecture nvcc "
                          "${CMAKE_CUDA_COMPILER} supports; building the full list, which will not "
                          "run on it. CUDA 12 still supports sm_70.")
          _duet_cuda_all_archs(_duet_all)
          list(APPEND _duet_archs ${_duet_all})
        endif()
      endforeach()
      list(REMOVE_DUPLICATES _duet_archs)
      list(JOIN _duet_sms ", " _duet_sms)
      set(_duet_why "native (${_duet_sms} detected)")
    endif()
  else()
    set(_duet_archs "${DUET_CUDA_ARCHS}")
    set(_duet_why "chosen with -DDUET_CUDA_ARCHS")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${_duet_archs}" CACHE STRING
      "CUDA architectures (chosen by duet; see cmake/DuetCuda.cmake)" FORCE)
  set(DUET_CUDA_ARCHITECTURES_CHOSEN "${_duet_archs}" CACHE INTERNAL "")
  set(DUET_CUDA_ARCHS_REASON "${_duet_why}" CACHE INTERNAL "")
else()
  set(DUET_CUDA_ARCHS_REASON "as given (CMAKE_CUDA_ARCHITECTURES or CUDAARCHS)" CACHE INTERNAL "")
  unset(DUET_CUDA_ARCHITECTURES_CHOSEN CACHE)
endif()

enable_language(CUDA)

# "native" (CMake 3.24+) is resolved by CMake's compiler check; the list it stands for decides
# whether the sm_90a objects below are built.
set(_duet_cuda_archs_resolved "${CMAKE_CUDA_ARCHITECTURES}")
if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native" OR CMAKE_CUDA_ARCHITECTURES STREQUAL "all"
   OR CMAKE_CUDA_ARCHITECTURES STREQUAL "all-major")
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native")
    set(_duet_cuda_archs_resolved "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
    if(NOT _duet_cuda_archs_resolved) # CMake before 3.24 or a compiler check cached earlier
      _duet_cuda_detect_gpus(_duet_cuda_archs_resolved)
      list(TRANSFORM _duet_cuda_archs_resolved APPEND "-real")
    endif()
  else()
    set(_duet_cuda_archs_resolved "${CMAKE_CUDA_ARCHITECTURES_ALL}")
  endif()
endif()

find_package(CUDAToolkit REQUIRED)

# tuning.c holds the AUTO GEMM tables that src/gpu/gemm_fast_gpu.inc reads; CMake drops the
# duplicate if the main list names it too.
# Each kernel family compiles in a translation unit of its own, so builds parallelise: the host
# code of the backend (backend_cuda.cu, module_cuda.cu), the ops and their simple kernels
# (ops_cuda.cu), the AUTO GEMM once per dtype (gemm_fast_*.cu, the largest), the tensor-core
# GEMMs (gemm_lowp.cu, gemm_tc_sw.cu, gemm_tc_small.cu), the in-place transpose and
# duet_gemm_ex's epilogue pass (gemm_epilogue.cu), duet_convert (convert.cu)
# (src/gpu/gpu_internal.h).
target_sources(duet PRIVATE
  src/cuda/backend_cuda.cu src/cuda/module_cuda.cu src/cuda/ops_cuda.cu
  src/cuda/gemm_fast_f32.cu src/cuda/gemm_fast_f64.cu src/cuda/gemm_fast_i32.cu
  src/cuda/gemm_lowp.cu src/cuda/gemm_tc_sw.cu src/cuda/gemm_tc_small.cu src/cuda/gemm_tiny.cu
  src/cuda/transpose_inplace.cu
  src/cuda/gemm_skinny.cu src/cuda/gemm_epilogue.cu src/cuda/convert.cu src/common/tuning.c)
target_compile_definitions(duet PRIVATE DUET_BACKEND_CUDA=1)
target_include_directories(duet PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/kernels
  ${CMAKE_CURRENT_SOURCE_DIR}/src)
# The target was created before CUDA was enabled, so its architectures are set here, not
# inherited from CMAKE_CUDA_ARCHITECTURES at creation.
set_target_properties(duet PROPERTIES
  CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
  CUDA_STANDARD 17
  CUDA_STANDARD_REQUIRED ON
  CUDA_EXTENSIONS OFF)
# -lineinfo: compute-sanitizer and Nsight Compute name source lines; no effect on the code.
target_compile_options(duet PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)

if(DUET_CUDA_STATIC_RUNTIME)
  set_target_properties(duet PROPERTIES CUDA_RUNTIME_LIBRARY Static)
  target_link_libraries(duet PRIVATE CUDA::cudart_static)
else()
  set_target_properties(duet PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  target_link_libraries(duet PRIVATE CUDA::cudart)
endif()
# NVRTC for duet_module_create (src/gpu/module_gpu.inc). The shared library: the static one
# needs its builtins and the PTX compiler linked in too, and it is large.
target_link_libraries(duet PRIVATE CUDA::nvrtc)

# The Hopper GEMMs (src/cuda/gemm_wgmma.cu, its fused-epilogue instances in gemm_wgmma_epi.cu,
# its 8-bit float ones in gemm_wgmma_f8.cu and gemm_wgmma_f8_epi.cu,
# kernels/gemm_wgmma.cuh; the f64 one on TMA loads, src/cuda/gemm_dmma_tma.cu,
# kernels/gemm_dmma_tma.cuh): wgmma, TMA and setmaxnreg exist
# only in the architecture-specific sm_90a target, which CMAKE_CUDA_ARCHITECTURES cannot name
# for one source alone, so it is an object library of its own with explicit -gencode flags,
# built whenever the list holds an sm_90 entry (90, 90-real, 90-virtual). Other GPUs never
# load it: gemm_wgmma_run checks the device first.
set(_duet_has_sm90 FALSE)
foreach(_duet_arch IN LISTS _duet_cuda_archs_resolved)
  if(_duet_arch MATCHES "^90")
    set(_duet_has_sm90 TRUE)
  endif()
endforeach()
if(_duet_has_sm90)
  add_library(duet_wgmma OBJECT src/cuda/gemm_wgmma.cu src/cuda/gemm_wgmma_epi.cu
    src/cuda/gemm_wgmma_f8.cu src/cuda/gemm_wgmma_f8_epi.cu src/cuda/gemm_wgmma_x3.cu
    src/cuda/gemm_dmma_tma.cu)
  set_target_properties(duet_wgmma PROPERTIES
    CUDA_ARCHITECTURES OFF
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_EXTENSIONS OFF
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  target_compile_options(duet_wgmma PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a -lineinfo>)
  target_include_directories(duet_wgmma PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/include
    ${CMAKE_CURRENT_SOURCE_DIR}/src
    ${CMAKE_CURRENT_SOURCE_DIR}/src/common
    ${CMAKE_CURRENT_SOURCE_DIR}/kernels)
  target_compile_definitions(duet_wgmma PRIVATE DUET_BUILDING DUET_BACKEND_CUDA=1
    $<$<BOOL:${BUILD_SHARED_LIBS}>:DUET_SHARED>)
  duet_target_warnings(duet_wgmma)
  target_sources(duet PRIVATE $<TARGET_OBJECTS:duet_wgmma>)
  target_compile_definitions(duet PRIVATE DUET_HAVE_WGMMA=1)
endif()

# One line for the configure summary (CMakeLists.txt), also printed here.
set(DUET_CUDA_ARCHS_SUMMARY "${DUET_CUDA_ARCHS_REASON}: ${CMAKE_CUDA_ARCHITECTURES}")
if(NOT "${_duet_cuda_archs_resolved}" STREQUAL "${CMAKE_CUDA_ARCHITECTURES}")
  string(APPEND DUET_CUDA_ARCHS_SUMMARY " = ${_duet_cuda_archs_resolved}")
endif()
if(_duet_has_sm90)
  string(APPEND DUET_CUDA_ARCHS_SUMMARY "; Hopper kernels also for sm_90a")
endif()
message(STATUS "duet: CUDA architectures: ${DUET_CUDA_ARCHS_SUMMARY}")
