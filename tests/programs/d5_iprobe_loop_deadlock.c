/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 16: both ranks 0 and 1 poll with MPI_Iprobe for a message from the
 * other (from any source on rank 1) before they send theirs; rank 2 waits
 * in MPI_Barrier. Nobody can ever act: a deadlock with two polling ranks,
 * each blocked as in the MPI_Probe its loop stands for. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, in = 0, out = 1, flag = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    while (!flag)
      MPI_Iprobe(1, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); // expect: deadlock rank=0
    MPI_Recv(&in, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&out, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
  } else if (rank == 1) {
    while (!flag)
      MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Recv(&in, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&out, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD); // expect: deadlock rank=2
  MPI_Finalize();
  return 0;
}
