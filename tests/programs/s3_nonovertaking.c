/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* SCENARIOS.md S3 (seed 000 Fig 3.3): deterministic; the Irecv matches by
 * MPI's non-overtaking rule before its Wait. No wildcard, no choice. */
#include <assert.h>
#include <mpi.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    int a = 1, b = 2;
    MPI_Request h1;
    MPI_Isend(&a, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &h1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
    MPI_Wait(&h1, MPI_STATUS_IGNORE);
  } else if (rank == 2) {
    int a = 0, b = 0;
    MPI_Request h2;
    MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &h2);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&b, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&h2, MPI_STATUS_IGNORE);
    assert(a == 1 && b == 2);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
