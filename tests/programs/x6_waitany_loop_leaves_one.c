/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* The twin of x5_testany_halo.c whose loop stops early: the index only
 * picks a slot, so `build` finds nothing in the loop that the order
 * decides, but the loop completes one request of two and leaves the
 * other to MPI_Waitall, so which one it handled depends on the order.
 * The run shows the loop did not complete every request it had, and the
 * choice is explored: the assertion fails when rank 2's message comes
 * first. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int buf[2], seen[2] = {0, 0};
    MPI_Request rq[2];
    for (int i = 0; i < 2; i++)
      MPI_Irecv(&buf[i], 1, MPI_INT, i + 1, 0, MPI_COMM_WORLD, &rq[i]);
    for (int n = 0; n < 1; n++) {
      int idx;
      MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE); // waitany
      seen[idx] = 1;
    }
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    printf("seen %d %d\n", seen[0], seen[1]);
    assert(seen[0] == 1); // expect: assertion rank=0
  } else {
    int v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
