/* mbhybrid-test: np=2 exit=1 */
/* Rank 1 writes through a pointer it got wrong, after a message exchange. */
#include <mpi.h>
#include <stddef.h>

static int *lookup(int key) { return key == 7 ? NULL : NULL; }

int main(int argc, char **argv) {
  int rank, key = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    key = 7;
    MPI_Send(&key, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&key, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int *slot = lookup(key);
    *(volatile int *)slot = key; // expect: crash rank=1
  }
  MPI_Finalize();
  return 0;
}
