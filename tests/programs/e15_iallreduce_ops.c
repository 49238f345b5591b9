/* mbhybrid-test: np=2 exit=1 */
/* Issue 16: the ranks reduce with different operations (MPI_SUM on rank
 * 0, MPI_MAX on rank 1). MPI neither hangs nor fails: it computes garbage
 * silently. The signature check compares the operation of every
 * reduction, blocking and nonblocking, and reports both calls. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, in, out = 0;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  in = rank + 1;
  if (rank == 0) {
    MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request); // expect: collective-mismatch rank=0
  } else {
    MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request); // expect: collective-mismatch rank=1
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  printf("rank %d: %d\n", rank, out);
  MPI_Finalize();
  return 0;
}
