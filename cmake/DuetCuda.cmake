# DuetCuda.cmake - the CUDA backend: language and architectures, the CUDA runtime, the sources.
#
# Architectures. -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable) or
# -DDUET_CUDA_ARCHS=... choose them; otherwise duet builds its default list:
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
set(DUET_CUDA_ARCHS "" CACHE STRING
    "CUDA architectures for duet (overrides CMAKE_CUDA_ARCHITECTURES), e.g. 80-real;90-real")
option(DUET_CUDA_STATIC_RUNTIME "Link the CUDA runtime statically (no libcudart.so needed at run time)" ON)

if(DUET_CUDA_ARCHS)
  set(CMAKE_CUDA_ARCHITECTURES "${DUET_CUDA_ARCHS}")
  set(_duet_cuda_archs_chosen TRUE)
elseif(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
  set(_duet_cuda_archs_chosen TRUE)
else()
  set(_duet_cuda_archs_chosen FALSE)
  # Keeps enable_language from picking the compiler's own default (a single old target).
  set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;90-virtual")
endif()

enable_language(CUDA)

if(NOT _duet_cuda_archs_chosen)
  if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 13.0)
    set(_duet_default_archs "70-real;75-real;80-real;86-real;89-real;90-real;90-virtual")
  else()
    set(_duet_default_archs "75-real;80-real;86-real;89-real;90-real;90-virtual")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${_duet_default_archs}" CACHE STRING
      "CUDA architectures (duet's default list; see cmake/DuetCuda.cmake)" FORCE)
endif()

find_package(CUDAToolkit REQUIRED)

# tuning.c holds the AUTO GEMM tables that kernels/gemm_fast.cuh reads; CMake drops the duplicate
# if the main list names it too.
# Each kernel family compiles in a translation unit of its own, so builds parallelise.
target_sources(duet PRIVATE src/cuda/backend_cuda.cu src/cuda/gemm_lowp.cu src/cuda/gemm_tc_sw.cu
  src/cuda/transpose_inplace.cu src/common/tuning.c)
target_sources(duet PRIVATE src/cuda/gemm_skinny.cu)
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

# The Hopper GEMMs (src/cuda/gemm_wgmma.cu, kernels/gemm_wgmma.cuh; the f64 one on TMA loads,
# src/cuda/gemm_dmma_tma.cu, kernels/gemm_dmma_tma.cuh): wgmma, TMA and setmaxnreg exist
# only in the architecture-specific sm_90a target, which CMAKE_CUDA_ARCHITECTURES cannot name
# for one source alone, so it is an object library of its own with explicit -gencode flags,
# built whenever the list holds an sm_90 entry (90, 90-real, 90-virtual). Other GPUs never
# load it: gemm_wgmma_run checks the device first.
set(_duet_has_sm90 FALSE)
foreach(_duet_arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
  if(_duet_arch MATCHES "^90")
    set(_duet_has_sm90 TRUE)
  endif()
endforeach()
if(_duet_has_sm90)
  add_library(duet_wgmma OBJECT src/cuda/gemm_wgmma.cu src/cuda/gemm_wgmma_x3.cu
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
