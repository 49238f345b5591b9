/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 38 (MPI-4.0 §11.2.2): rank 0 sends a message nobody receives; the
 * send returns (MPI buffers it) and both ranks finalize. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, buf[4] = {1, 2, 3, 4};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    MPI_Send(buf, 4, MPI_INT, 1, 7, MPI_COMM_WORLD); // expect: unreceived-message rank=0
  MPI_Finalize();
  return 0;
}
