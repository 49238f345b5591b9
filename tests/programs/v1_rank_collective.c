/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 19: a collective under a condition that mixes the rank and the
 * program's input. Without arguments `n_iters` is 2, every rank calls
 * MPI_Allreduce, and the run is clean. With the argument `1`, rank 1
 * skips it and goes on to MPI_Finalize while rank 0 waits in it: a
 * deadlock. `build` finds the collective (the branch on line 19 depends on
 * the rank, `argc`, `argv[1]`): the default run warns of it and says its
 * verdict holds for this input; the run with `1` confirms it. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, n_iters = 2, local, total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1)
    n_iters = atoi(argv[1]);
  local = rank + 1;
  if (rank % 2 == 0 || n_iters > 1)
    MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expect: collective-divergence rank=0
  MPI_Finalize();
  return 0;
}
