/* mbhybrid-test: np=3 exit=0 interleavings=2 options=--search,exhaustive,--timeout,60 */
/* Rank 0 polls MPI_Testsome over a send to rank 1 and a receive from rank 2;
 * rank 2 sends only after rank 0's "go", which follows the send's
 * completion, so the receive can never complete first. The exhaustive
 * reference still forces it first (it forces every index, feasible or
 * not), and the forced run hangs. Its polls stood for MPI_Waitsome on every
 * outstanding request, and the send, which can complete, made the rank
 * look slow: the infeasible run ended at the timeout. Forced, the call
 * stands for MPI_Wait on the forced request alone, and the graph confirms
 * the hang at once (the run is infeasible, not a finding). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, x = 1, y = 0, go = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request req[2];
    int index = -1, outcount = 0, indices[2];
    MPI_Isend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&y, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &req[1]);
    while (outcount == 0)
      MPI_Testsome(2, req, &outcount, indices, MPI_STATUSES_IGNORE);
    index = indices[0];
    if (index == 0)
      MPI_Send(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    printf("rank 0: first %d\n", index);
  } else if (rank == 1) {
    MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
