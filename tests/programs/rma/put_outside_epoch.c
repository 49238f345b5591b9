/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 39 (MPI-4.0 §12.5): rank 1 puts into rank 0's window before any
 * fence: no access epoch is open. put_in_fence.c adds the fence. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, *base, one = 1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  if (rank == 1)
    MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
