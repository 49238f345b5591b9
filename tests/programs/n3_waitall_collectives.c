/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 11, with MPI_Waitall: P0 waits for barriers on two communicators
 * together; P1 joins the one on the duplicate, then waits in MPI_Recv for
 * the message P0 sends after its Waitall, before joining the one on
 * MPI_COMM_WORLD. The duplicate's barrier completes; MPI_Waitall cannot
 * return without the world's, which P1 never posts. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Comm dup;
  MPI_Request barriers[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0) {
    MPI_Ibarrier(MPI_COMM_WORLD, &barriers[0]);      // expect: deadlock rank=0
    MPI_Ibarrier(dup, &barriers[1]);
    MPI_Waitall(2, barriers, MPI_STATUSES_IGNORE); // expect: deadlock rank=0
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Ibarrier(dup, &barriers[1]);
    MPI_Wait(&barriers[1], MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Ibarrier(MPI_COMM_WORLD, &barriers[0]);
    MPI_Wait(&barriers[0], MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
