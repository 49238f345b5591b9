/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,3 */
/* Issue 16: a hang the wait-for graph cannot confirm must say why. Rank 0
 * waits for a message to itself on MPI_COMM_SELF (a communicator
 * mbhybrid does not name); rank 1 polls with MPI_Iprobe for a message
 * nobody sends. The run ends at the timeout, and the finding names each
 * rank's call with the reason the graph could not judge it. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, value, flag = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE); // expect: timeout rank=0
  } else {
    while (!flag)
      MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
