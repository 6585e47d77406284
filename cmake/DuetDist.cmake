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
    src/dist/dist_gemm.c)
  add_library(duet::dist ALIAS duet_dist)
  # Exported as duet::dist, like duet::duet.
  set_target_properties(duet_dist PROPERTIES EXPORT_NAME dist
    C_VISIBILITY_PRESET hidden
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
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
endif()
