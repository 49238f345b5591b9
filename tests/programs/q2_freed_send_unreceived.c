/* mbhybrid-test: np=3 exit=1 */
/* Issue 38: an active send whose request is freed (legal: MPI-4.0 §3.7.3)
 * still has to be received; rank 2's is not, while rank 1's is, by a
 * receive rank 0 completes through MPI_Waitany beside a wildcard one. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, w = 0, idx;
  MPI_Request rq, two[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &two[0]);
    MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &two[1]);
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Isend(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq);
    MPI_Request_free(&rq);
    MPI_Send(&rank, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  } else {
    MPI_Isend(&rank, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &rq); // expect: unreceived-message rank=2
    MPI_Request_free(&rq);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
