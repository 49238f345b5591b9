/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* Issue 11: which request MPI_Waitany returns is nondeterminism too (seed
 * 001 §4). Rank 0 receives from ranks 1 and 2 with specific sources, so no
 * wildcard is involved; the program goes wrong only when the second
 * request (rank 2's message) completes first. Both messages are sent at
 * once, so either index can come first: two interleavings, one with the
 * assertion. Rank 0 completes both requests before it checks, so each run
 * sees both messages. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int a = 0, b = 0, first = -1, other;
    MPI_Request reqs[2];
    MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&b, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitany(2, reqs, &first, MPI_STATUS_IGNORE); // waitany
    MPI_Waitany(2, reqs, &other, MPI_STATUS_IGNORE);
    printf("first %d sum %d\n", first, a + b);
    assert(first != 1); // expect: assertion rank=0
  } else {
    int v = rank * 10;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
