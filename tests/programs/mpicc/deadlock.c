/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 17 item 3: a program built by plain `mpicc` (tests/e2e/mpicc_builds.rs
 * builds it at -O0 and -O2, with and without -g), not by `mbhybrid build`.
 * Each rank first receives from the other, in a helper -O2 inlines into
 * main: a deadlock, whose line on each rank comes from the return address
 * the runtime records and the executable's debug information. */
#include <mpi.h>

static void exchange(int *value, int other) {
  MPI_Recv(value, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=0 rank=1
  MPI_Send(value, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int rank, value = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  exchange(&value, 1 - rank);
  MPI_Finalize();
  return 0;
}
