# DuetDist.cmake - the optional duet_dist library (distributed GEMM over MPI, duet::dist).
#
# DUET_DIST: AUTO builds it when find_package(MPI COMPONENTS C) succeeds, ON requires MPI, OFF
# leaves it out. Nothing else in duet depends on it.
set(DUET_DIST AUTO CACHE STRING "Build duet_dist (distributed GEMM over MPI): AUTO, ON or OFF")
set_property(CACHE DUET_DIST PROPERTY STRINGS AUTO ON OFF)
set(DUET_HAVE_DIST OFF)
set(DUET_DIST_REASON "DUET_DIST=OFF")
if(NOT DUET_DIST STREQUAL "OFF")
  if(DUET_DIST STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(DUET_HAVE_DIST ON)
    set(DUET_DIST_REASON "MPI ${MPI_C_VERSION}")
  else()
    set(DUET_DIST_REASON "no MPI found")
  endif()
endif()

if(DUET_HAVE_DIST)
  add_library(duet_dist
    src/dist/dist_grid.c
    src/dist/dist_gemm.c
    src/dist/dist_nccl.c)
  add_library(duet::dist ALIAS duet_dist)
  # Exported as duet::dist, like duet::duet.
  set_target_properties(duet_dist PROPERTIES EXPORT_NAME dist
    C_VISIBILITY_PRESET hidden
    VERSION ${PROJECT_VERSION} SOVERSION ${DUET_SOVERSION})
  target_include_directories(duet_dist
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src/dist)
  target_compile_definitions(duet_dist PRIVATE DUET_DIST_BUILDING
    PUBLIC $<$<BOOL:${BUILD_SHARED_LIBS}>:DUET_DIST_SHARED>)
  # duet and MPI are public: duet_dist.h includes duet.h and mpi.h.
  target_link_libraries(duet_dist PUBLIC duet MPI::MPI_C)
  if(NOT WIN32)
    target_link_libraries(duet_dist PRIVATE m)
  endif()
  duet_target_warnings(duet_dist)

  # The NCCL transport (DUET_DIST_TRANSPORT_NCCL): cuda backend, when nccl.h and libnccl are
  # found (NCCL_ROOT, the CUDA toolkit, the system). -DDUET_DIST_NCCL=OFF leaves it out.
  option(DUET_DIST_NCCL "Build duet_dist's NCCL transport when NCCL is found (cuda backend)" ON)
  set(DUET_HAVE_DIST_NCCL OFF)
  if(DUET_DIST_NCCL AND DUET_BACKEND STREQUAL "cuda")
    find_package(CUDAToolkit REQUIRED)
    set(_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT})
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
              PATH_SUFFIXES include)
    find_library(NCCL_LIBRARY nccl HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
                 PATH_SUFFIXES lib lib64)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(DUET_HAVE_DIST_NCCL ON)
      target_compile_definitions(duet_dist PRIVATE DUET_DIST_HAVE_NCCL)
      # SYSTEM: some nccl.h releases declare f() without a prototype, which -Werror rejects.
      target_include_directories(duet_dist SYSTEM PRIVATE ${NCCL_INCLUDE_DIR})
      target_link_libraries(duet_dist PRIVATE ${NCCL_LIBRARY} CUDA::cudart)
      string(APPEND DUET_DIST_REASON ", NCCL ${NCCL_LIBRARY}")
    else()
      string(APPEND DUET_DIST_REASON ", no NCCL")
    endif()
  endif()
endif()
