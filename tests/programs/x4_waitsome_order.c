/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* x1_waitany_order.c with MPI_Waitsome: the choice is the request the call
 * returns first (seed 001 §4; during verification it returns one). The
 * assertion fails only when rank 2's request heads the list. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int a = 0, b = 0, first = -1, done = 0;
    MPI_Request reqs[2];
    MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&b, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &reqs[1]);
    while (done < 2) {
      int out, indices[2];
      MPI_Waitsome(2, reqs, &out, indices, MPI_STATUSES_IGNORE); // waitsome
      if (first < 0) first = indices[0];
      done += out;
    }
    printf("first %d sum %d\n", first, a + b);
    assert(first != 1); // expect: assertion rank=0
  } else {
    int v = rank * 10;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
