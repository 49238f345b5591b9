/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* Issue 11: a crash must not hide a sender. Rank 0's wildcard receive can
 * take rank 1's message or rank 2's; only rank 2's trips the assertion.
 * Rank 1 is slow: it sleeps a second before it sends. In the first run
 * rank 0 takes rank 2's message and fails while rank 1 has not sent yet,
 * and the launcher kills the job when rank 0 dies. Before failed ranks
 * were held until the others could do no more (src/deadlock.rs), rank 1
 * died with its send unrecorded, so no receive listed it and the search
 * said "complete" after that one run. The sleep only makes the old
 * failure certain; the result must not depend on it. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("sig 0: %d\n", v);
    assert(v != 2); // expect: assertion rank=0
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    if (rank == 1) {
      struct timespec slow = {1, 0};
      nanosleep(&slow, NULL);
    }
    v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
