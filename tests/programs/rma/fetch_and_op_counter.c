/* mbhybrid-test: np=3 exit=3 interleavings=1 */
/* Issue 39: a shared work counter on rank 0, taken with MPI_Fetch_and_op
 * under a shared lock, three times per rank. Correct: no epoch error;
 * partial (passive target: window memory not watched under locks). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, *counter, one = 1, taken, total;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &counter, &win);
  *counter = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 3; i++) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&one, &taken, MPI_INT, 0, 0, MPI_SUM, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    total = *counter;
    MPI_Win_unlock(0, win);
    printf("counter %d of %d\n", total, 3 * size);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
