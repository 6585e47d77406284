# DuetDetectBackend.cmake - picks the backend: the user's BACKEND, else cuda/hip when both the
# compiler and a GPU of that vendor are present, else cpu.
include(CheckLanguage)

function(duet_detect_backend out)
  if(BACKEND)
    string(TOLOWER "${BACKEND}" b)
    if(NOT b MATCHES "^(cpu|cuda|hip)$")
      message(FATAL_ERROR "BACKEND must be cpu, cuda or hip (got '${BACKEND}')")
    endif()
    set(${out} ${b} PARENT_SCOPE)
    set(DUET_BACKEND_REASON "chosen with -DBACKEND" PARENT_SCOPE)
    return()
  endif()

  # NVIDIA: nvcc reachable and a GPU visible to the driver.
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_program(DUET_NVIDIA_SMI nvidia-smi)
    if(DUET_NVIDIA_SMI)
      execute_process(COMMAND ${DUET_NVIDIA_SMI} -L OUTPUT_VARIABLE gpus RESULT_VARIABLE rc
                      ERROR_QUIET TIMEOUT 20)
      if(rc EQUAL 0 AND gpus MATCHES "GPU [0-9]")
        set(${out} cuda PARENT_SCOPE)
        set(DUET_BACKEND_REASON "nvcc and an NVIDIA GPU found" PARENT_SCOPE)
        return()
      endif()
    endif()
  endif()

  # AMD: a HIP compiler and a GPU agent known to the ROCm runtime.
  find_program(DUET_HIPCC hipcc PATHS /opt/rocm/bin)
  find_program(DUET_ROCMINFO rocminfo PATHS /opt/rocm/bin)
  if(DUET_HIPCC AND DUET_ROCMINFO AND EXISTS /dev/kfd)
    execute_process(COMMAND ${DUET_ROCMINFO} OUTPUT_VARIABLE agents RESULT_VARIABLE rc
                    ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0 AND agents MATCHES "gfx[0-9a-f]+")
      set(${out} hip PARENT_SCOPE)
      set(DUET_BACKEND_REASON "a HIP compiler and an AMD GPU found" PARENT_SCOPE)
      return()
    endif()
  endif()

  set(${out} cpu PARENT_SCOPE)
  set(DUET_BACKEND_REASON "no GPU with its compiler found" PARENT_SCOPE)
endfunction()
