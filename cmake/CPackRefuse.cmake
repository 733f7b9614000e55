# CPACK_PROJECT_CONFIG_FILE of a CUDA/NCCL build (cmake/Packaging.cmake): no Debian package of it.
if(CPACK_GENERATOR STREQUAL "DEB")
  message(FATAL_ERROR "collbench: ${CPACK_COLLBENCH_REFUSE}")
endif()
