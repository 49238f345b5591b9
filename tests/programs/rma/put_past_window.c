/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Rank 0 exposes 3 ints; rank 1 puts one at displacement 3, just past
 * them. MPI-4.0 §12.3 requires the target range to lie within the target
 * window; MPI does not check it, and the write lands in memory the
 * window does not own. Reported at the put (buffer-overflow). Twin:
 * put_disjoint_bytes_fence.c (displacements 1 and 2 of 3). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 7;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = 0;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&value, 1, MPI_INT, 0, 3, 1, MPI_INT, win); // expect: buffer-overflow rank=1
  MPI_Win_fence(0, win);
  if (rank == 0)
    printf("rank 0 holds %d %d %d\n", base[0], base[1], base[2]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
