/* mbhybrid-test: np=3 exit=1 interleavings=1 */
/* Issue 39, remote races: ranks 1 and 2 both MPI_Put to the
 * first int of rank 0's window in one fence epoch: which value lands is
 * undefined (MPI-4.0 §12.7). put_disjoint_bytes_fence.c is the twin. */
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
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=1
  else if (rank == 2)
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=2
  MPI_Win_fence(0, win);
  if (rank == 0)
    printf("rank 0 holds %d\n", base[0]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
