/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* SCENARIOS.md S1 and E11, the crooked barrier (seed 000 Fig 1.1/3.2/4.2).
 * P2's send is issued after the barrier but can still match P1's wildcard
 * Irecv, posted before it; then x == 33 and the assertion fails. Plain
 * mpiexec runs practically never show it. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int value = 22;
    MPI_Request req;
    MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    int x = 0, y = 0;
    MPI_Request req;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    printf("x=%d y=%d\n", x, y);
    fflush(stdout);
    assert(x != 33); // expect: assertion rank=1
  } else {
    int value = 33;
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
