/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Twin of fetch_and_op_read_before_flush.c: rank 1 reads the fetched value
 * after the MPI_Win_flush that completes the MPI_Fetch_and_op (40). No
 * finding. */
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
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&value, &got, MPI_INT, 0, 0, MPI_SUM, win);
    MPI_Win_flush(0, win);
    seen = got;
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("rank 0 holds %d\n", *base);
  if (rank == 1)
    printf("rank 1 got %d seen %d\n", got, seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
