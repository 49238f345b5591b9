/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 39, window memory: rank 1 puts into rank 0's window while rank 0
 * stores to the same int in the same fence epoch. MPI-4.0 §12.7: a local
 * store conflicts with a remote put to the same bytes in one exposure
 * epoch; nothing before the closing fence orders them. The twin,
 * local_store_put_fence_between.c, stores one fence earlier. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 7;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = base[3] = 0;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&value, 1, MPI_INT, 0, 2, 1, MPI_INT, win); // expect: rma-race rank=1
  if (rank == 0)
    base[2] = 5; // expect: rma-race rank=0
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 holds %d\n", base[2]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
