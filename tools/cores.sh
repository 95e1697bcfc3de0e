# The machine's CPU count, for build and test parallelism: sourced by the
# scripts that need it (tools/bootstrap.sh, the benches, the sanitizer build,
# the Slurm test cluster). nproc obeys OMP_NUM_THREADS and OMP_THREAD_LIMIT,
# which `./gauge test` sets to 1 for every test, so it is run without them.
tg_cores() { env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc; }
