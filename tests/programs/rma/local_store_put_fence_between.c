/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39, window memory: local_store_put_same_fence.c with a fence
 * between rank 0's store and rank 1's put: the store is in the epoch
 * before the put's, and the fence orders it first (MPI-4.0 §12.5.1).
 * No race; complete. Rank 0 holds 7. */
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
  if (rank == 0)
    base[2] = 5;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&value, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 holds %d\n", base[2]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
