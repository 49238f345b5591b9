/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39: put_outside_epoch.c with the fence that opens the epoch: no
 * epoch error; complete. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, *base, one = 1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (rank == 1)
    MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
