/* mbhybrid-test: np=2 exit=1 */
/* Issue 12: rank 1 frees a buffer twice. glibc finds its heap corrupted
 * and calls abort(): that is a crash, not the program's assertion, and
 * the finding quotes glibc, points at the free, and shows the stack of
 * the program's own frames (release <- main). */
#include <mpi.h>
#include <stdlib.h>

static void release(int *buffer) {
  free(buffer); // expect: crash rank=1
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int *buffer = malloc(4 * sizeof(int));
  int root_rank = rank;
  MPI_Bcast(&root_rank, 1, MPI_INT, 0, MPI_COMM_WORLD);
  release(buffer);
  if (rank == 1)
    release(buffer);
  MPI_Finalize();
  return 0;
}
