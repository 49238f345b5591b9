/* mbhybrid-test: np=3 exit=0 */
/* Issue 38 §4: a nonblocking collective never waited or tested is a
 * request-leak at its call on every rank, as a point-to-point request is
 * (MPI-4.1 §3.7.3: every request must be completed or freed). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, b = 0, in, out = 0, all[3];
  MPI_Request bcast, reduce, gather;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  in = rank;
  MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &bcast); // expect: request-leak rank=0
  MPI_Ireduce(&in, &out, 1, MPI_INT, MPI_SUM, 2, MPI_COMM_WORLD, &reduce); // expect: request-leak rank=1
  MPI_Iallgather(&in, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &gather);
  MPI_Wait(&gather, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d\n", rank);
  MPI_Finalize();
  return 0;
}
