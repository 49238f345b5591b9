/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39, window memory: local_store_get_same_fence.c with a fence
 * between rank 0's store and rank 1's get: the fence orders the store
 * first (MPI-4.0 §12.5.1), so rank 1 gets 9. No race; complete. */
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
    base[3] = 9;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Get(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 1)
    printf("rank 1 got %d\n", got);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
