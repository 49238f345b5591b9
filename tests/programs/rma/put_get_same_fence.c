/* mbhybrid-test: np=3 exit=1 interleavings=1 */
/* Issue 39, remote races: rank 1 MPI_Puts the first int of
 * rank 0's window while rank 2 MPI_Gets it, in one fence epoch: rank 2
 * may read the old value or the new one (MPI-4.0 §12.7).
 * put_get_successive_fences.c is the twin. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = 0;
  value = 10 + rank;
  int got = -1;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=1
  else if (rank == 2)
    MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=2
  MPI_Win_fence(0, win);
  MPI_Win_fence(0, win);
  if (rank == 2)
    printf("rank 2 got %d\n", got);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
