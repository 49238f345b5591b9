/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 16: a hang in a polling loop is confirmed on the wait-for graph,
 * not left to the timeout. Rank 0 polls its receive from rank 1 with
 * MPI_Test; rank 1 first waits in MPI_Recv for a message rank 0 sends only
 * after its receive completed. Each waits for the other: a deadlock, the
 * polling rank blocked as in the MPI_Wait its loop stands for. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, in = 0, out = 1, flag = 0;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&in, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
    while (!flag)
      MPI_Test(&request, &flag, MPI_STATUS_IGNORE); // expect: deadlock rank=0
    MPI_Send(&out, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Send(&out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
