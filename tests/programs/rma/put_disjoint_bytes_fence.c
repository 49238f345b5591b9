/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Issue 39, remote races: put_same_bytes_fence.c with each origin
 * putting to its own int (displacement = its rank): no race; complete. */
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
    MPI_Put(&value, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
  else if (rank == 2)
    MPI_Put(&value, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    printf("rank 0 holds %d %d\n", base[1], base[2]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
