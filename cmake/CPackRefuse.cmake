# CPACK_PROJECT_CONFIG_FILE of a CUDA/NCCL build (cmake/Packaging.cmake): cpack stops here.
message(FATAL_ERROR "collbench: ${CPACK_COLLBENCH_REFUSE}")
