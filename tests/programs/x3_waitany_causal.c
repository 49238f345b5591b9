/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* A Waitany whose second request cannot complete first: rank 2 sends only
 * after rank 0 replied to rank 1's message, which rank 0 does only after
 * its Waitany returned. Rank 2's message carries a clock later than the
 * Waitany's, so index 1 must not be offered (seed 001 §4): a replay forced
 * to it would wait forever. One interleaving, nothing found. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int a = 0, b = 0, first = -1, other, go = 1;
    MPI_Request reqs[2];
    MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&b, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitany(2, reqs, &first, MPI_STATUS_IGNORE); // waitany
    MPI_Send(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
    MPI_Waitany(2, reqs, &other, MPI_STATUS_IGNORE);
    printf("first %d sum %d\n", first, a + b);
    assert(first == 0);
  } else if (rank == 1) {
    int v = 10;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    int go, v = 20;
    MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
