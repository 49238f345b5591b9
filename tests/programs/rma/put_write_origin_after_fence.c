/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Twin of put_write_origin_before_fence.c: rank 1 writes the origin buffer
 * of its MPI_Put after the fence that completes it. No finding;
 * complete. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 1, got = -1, seen = -1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 40 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (rank == 1)
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 1)
    value = 2;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("rank 0 holds %d\n", *base);
  if (rank == 1)
    printf("rank 1 got %d seen %d\n", got, seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
