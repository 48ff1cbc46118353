# MPI tests: real Open MPI ranks on this machine (skip where mpirun is missing)
TESTS += tests/mpi/colls.sh tests/mpi/corrupt.sh tests/mpi/badinput.sh tests/mpi/mismatch.sh \
	tests/mpi/outputs.sh tests/mpi/progress.sh tests/mpi/watchdog.sh
EXTRA_DIST += tests/mpi/colls.sh tests/mpi/corrupt.sh tests/mpi/badinput.sh tests/mpi/mismatch.sh \
	tests/mpi/outputs.sh tests/mpi/progress.sh tests/mpi/watchdog.sh
