/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Result buffers (MPI-4.0 §12.5.4, §12.7): rank 1 reads the result buffer
 * of its MPI_Fetch_and_op before the MPI_Win_flush that completes it:
 * buffer-reuse at the read. Twin: fetch_and_op_read_after_flush.c. */
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
    MPI_Fetch_and_op(&value, &got, MPI_INT, 0, 0, MPI_SUM, win); // expect: buffer-reuse rank=1
    seen = got; // expect: buffer-reuse rank=1
    MPI_Win_flush(0, win);
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
