/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Issue 38: both ranks MPI_Put to the same int of rank 0's window in one
 * fence epoch, a conflicting access whose result MPI-4.0 §12.7 leaves
 * undefined. mbhybrid does not check RMA races yet: `build`
 * warns at each call, and `verify` names every call with its line, says
 * the run is partial and exits 3, never "no errors (complete)". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *target, value;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &target, &win);
  *target = 0;
  value = rank + 1;
  MPI_Win_fence(0, win);
  MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    printf("target %d\n", *target);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
