# `cpack -G DEB` in a build tree: a Debian package of what cmake/Install.cmake installs, under
# /usr. Meant for the CPU build (-DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF): the CUDA and NCCL
# libraries in /usr/local/cuda are no Debian packages, so a package linking them could not
# declare them; such a build refuses to package (below). tests/install/deb_test.sh installs the
# .deb into a clean Debian 12 root and runs it there.
set(CPACK_PACKAGE_NAME collbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "collbench")
set(CPACK_PACKAGE_CONTACT "collbench developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "benchmark, verify and profile collective communication on Slurm clusters")
set(CPACK_PACKAGE_DESCRIPTION
  "collbench measures collective communication (all-reduce, broadcast, all-gather ...) with\
 hand-written algorithms and the MPI library's own collectives, verified point by point, from\
 one run under mpirun to a sweep of node layouts as one Slurm job (sweep.sh). JSON Lines results;\
 collplot, collcompare and colltune turn them into bandwidth curves, reports, run-vs-run verdicts\
 and tuning files; collmodel exports a PyTorch model's DDP buckets for the DDP workload. This package is the CPU (MPI) build.")
set(CPACK_GENERATOR DEB)
# Install with DESTDIR and the real prefix (/usr), so the files written at install time (the
# modulefile) name /usr and not CPack's staging folder.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Shared libraries: dpkg-shlibdeps (libopenmpi3, libyaml-cpp0.7, libstdc++6 ...), our own private
# ones found through their folder. The rest is what the installed programs run:
#   mpirun (openmpi-bin); the analysis' Python modules; sweep.sh's Slurm clients are
#   suggested only (mpirun alone runs collbench; analyze.sh and the tools run anywhere), and so
#   is PyTorch (collmodel alone imports it).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    ${CMAKE_BINARY_DIR}/collectives ${CMAKE_BINARY_DIR}/collectives/gpu)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "openmpi-bin, python3, python3-matplotlib, python3-numpy, python3-scipy, python3-pandas, python3-tabulate, python3-jsonschema, python3-yaml")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, slurm-wlm, munge, iproute2, environment-modules | lmod, python3-torch")

if(COLLBENCH_HAVE_CUDA OR COLLBENCH_HAVE_NCCL)
  # CPack reads this at package time: a CUDA/NCCL build would need libraries no package provides.
  set(CPACK_COLLBENCH_REFUSE "this build links CUDA/NCCL from /usr/local/cuda (not Debian packages): package a CPU build, -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF")
  set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/CPackRefuse.cmake)
endif()
include(CPack)
