/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* x1_waitany_order.c with MPI_Testany polling: a Testany that completes a
 * request while both are active is the choice (seed 001 §4); polls that
 * complete nothing are not. The assertion fails only when rank 2's
 * message is taken first. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int a = 0, b = 0, order[2], done = 0;
    MPI_Request reqs[2];
    MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&b, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &reqs[1]);
    while (done < 2) {
      int index, flag = 0;
      MPI_Testany(2, reqs, &index, &flag, MPI_STATUS_IGNORE); // testany
      if (flag && index != MPI_UNDEFINED) order[done++] = index;
    }
    printf("first %d sum %d\n", order[0], a + b);
    assert(order[0] != 1); // expect: assertion rank=0
  } else {
    int v = rank * 10;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
