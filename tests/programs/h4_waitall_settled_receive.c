/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--buffering,zero,--timeout,60 */
/* Soak seed 4094's shape: rank 0 waits with MPI_Waitall for a receive from
 * rank 1 and a wildcard one. Rank 2 sends twice with the wildcard's tag:
 * the first message completes the wildcard receive inside the Waitall, the
 * second has no receive. Rank 1 sends with a tag rank 0 never receives.
 * Without buffering all three wait: rank 0 for rank 1, ranks 1 and 2 for
 * rank 0. The runtime processes a Waitall's completions when it returns,
 * so the wildcard receive used to look still posted to the wait-for graph,
 * which then judged rank 2's second send takeable ("slow, not stuck") and
 * left the hang to the timeout. The runtime now writes a Settled record
 * for it once the Waitall looks stuck, and the deadlock is confirmed. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, in[2] = {0, 0}, out = 7;
  MPI_Request requests[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&in[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &requests[0]); // expect: deadlock rank=0
    MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); // expect: deadlock rank=0
  } else if (rank == 1) {
    MPI_Send(&out, 1, MPI_INT, 0, 2, MPI_COMM_WORLD); // expect: deadlock rank=1
  } else {
    MPI_Send(&out, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Send(&out, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); // expect: deadlock rank=2
  }
  MPI_Finalize();
  return 0;
}
