/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39, window memory: local_store_put_same_fence.c with rank 0
 * storing to every int of its window but the one rank 1 puts into, in
 * the same fence epoch: different bytes do not conflict (MPI-4.0 §12.7).
 * No race, no false alarm; complete. Rank 0 holds 5 5 7 5. */
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
    MPI_Put(&value, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
  if (rank == 0) {
    base[0] = 5;
    base[1] = 5;
    base[3] = 5;
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 holds %d %d %d %d\n", base[0], base[1], base[2], base[3]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
