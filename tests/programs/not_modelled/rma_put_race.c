/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 38: both ranks MPI_Put to their own int of rank 0's window in
 * one fence epoch (no race: rma/put_same_bytes_fence.c is the racy one).
 * `build` warns at each call with what `verify` checks of it; built with
 * the access checks, a fence program is checked fully (issue 39: window
 * memory included), so `verify` says complete. Built by plain mpicc (no
 * access checks), `verify` names every call with its line, says the run
 * is partial and exits 3, never "no errors (complete)". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *target, value;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &target, &win);
  *target = 0;
  value = rank + 1;
  MPI_Win_fence(0, win);
  MPI_Put(&value, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    printf("target %d\n", *target);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
