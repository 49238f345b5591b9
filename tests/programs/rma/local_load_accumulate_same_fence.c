/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 39, window memory: rank 1 adds to an int of rank 0's window with
 * MPI_Accumulate while rank 0 reads it in the same fence epoch (MPI-4.0
 * §12.7: a local load conflicts with a remote update of the same bytes
 * in one exposure epoch; accumulates are atomic only with each other).
 * The twin, local_load_accumulate_after_fence.c, reads after a fence. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 7, seen = -1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = base[3] = 1;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Accumulate(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win); // expect: rma-race rank=1
  if (rank == 0)
    seen = base[0]; // expect: rma-race rank=0
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 saw %d\n", seen > 0);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
