# A PyPI torch wheel's CUDA libraries (NCCL, cuDNN, cuSPARSELt, NVSHMEM, the
# CUDA 13 runtime) live beside torch, in site-packages/nvidia/*/lib, and
# libtorch_cuda.so finds them through its own RUNPATH. The linker does not
# read that RUNPATH when it resolves libtorch_cuda.so's needs, so it took the
# system's: torch 2.15's libtorch_cuda.so needs NCCL symbols (ncclCommGrow,
# ncclCommSuspend, ...) that the CUDA 13.0 toolkit's older libnccl.so.2 (on
# the loader's path) lacks, and the collector did not link. -rpath-link points
# the link at the wheel's own libraries and -rpath the executables at run
# time, whatever the system's loader path holds. A LibTorch C++ distribution
# keeps its libraries in its own lib/, which Torch's imported targets name.
get_filename_component(_tg_torch_site "${Torch_DIR}/../../../.." ABSOLUTE)
file(GLOB _tg_wheel_lib_dirs LIST_DIRECTORIES true "${_tg_torch_site}/nvidia/*/lib")
if(_tg_wheel_lib_dirs)
  foreach(_tg_dir IN LISTS _tg_wheel_lib_dirs)
    add_link_options("LINKER:-rpath-link,${_tg_dir}" "LINKER:-rpath,${_tg_dir}")
  endforeach()
  list(LENGTH _tg_wheel_lib_dirs _tg_n)
  message(STATUS "torch wheel libraries: ${_tg_n} folders under ${_tg_torch_site}/nvidia linked by path")
endif()
