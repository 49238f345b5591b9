/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 39, window memory: rank 1 gets an int of rank 0's window while
 * rank 0 stores to it in the same fence epoch: the get may read the old
 * value or the new one (MPI-4.0 §12.7: a local store conflicts with any
 * remote access to the same bytes in one exposure epoch). The twin,
 * local_store_get_fence_between.c, stores one fence earlier. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, got = -1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = base[3] = 0;
  MPI_Win_fence(0, win);
  if (rank == 0)
    base[3] = 9; // expect: rma-race rank=0
  if (rank == 1)
    MPI_Get(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, win); // expect: rma-race rank=1
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 1)
    printf("rank 1 got %d\n", got >= 0);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
