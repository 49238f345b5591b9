/* mbhybrid-test: np=3 exit=0 interleavings=3 options=--search,exhaustive,--timeout,60 */
/* Twice, rank 0 polls (MPI_Testany, then MPI_Testsome) over a send to
 * rank 1 and a receive from rank 2; rank 2 sends only after rank 0's "go",
 * which follows the send's completion, so the receive can never complete
 * first. The exhaustive reference still forces it first (it forces every
 * index, feasible or not), and each such forced run hangs. Its polls
 * stood for MPI_Waitany/MPI_Waitsome on every outstanding request, and
 * the send, which can complete, made the rank look slow: the infeasible
 * runs ended at the timeout. Forced, the call stands for MPI_Wait on the
 * forced request alone, and the graph confirms the hang at once (the run
 * is infeasible, not a finding). */
#include <mpi.h>
#include <stdio.h>

/* The receive first can only be forced: "go" follows the send. */
static int first_of_send_and_receive(int phase) {
  int x = phase, y = 0, go = 1, index = -1;
  MPI_Request req[2];
  MPI_Isend(&x, 1, MPI_INT, 1, phase, MPI_COMM_WORLD, &req[0]);
  MPI_Irecv(&y, 1, MPI_INT, 2, phase, MPI_COMM_WORLD, &req[1]);
  if (phase == 0) {
    int flag = 0;
    while (!flag)
      MPI_Testany(2, req, &index, &flag, MPI_STATUS_IGNORE);
  } else {
    int outcount = 0, indices[2];
    while (outcount == 0)
      MPI_Testsome(2, req, &outcount, indices, MPI_STATUSES_IGNORE);
    index = indices[0];
  }
  if (index == 0)
    MPI_Send(&go, 1, MPI_INT, 2, 10 + phase, MPI_COMM_WORLD);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  return index;
}

int main(int argc, char **argv) {
  int rank, y = 0, go = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int phase = 0; phase < 2; phase++) {
    if (rank == 0) {
      printf("rank 0: phase %d first %d\n", phase, first_of_send_and_receive(phase));
    } else if (rank == 1) {
      MPI_Recv(&y, 1, MPI_INT, 0, phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&go, 1, MPI_INT, 0, 10 + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&y, 1, MPI_INT, 0, phase, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
