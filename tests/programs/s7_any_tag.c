/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* SCENARIOS.md S7 (seed 000 Fig 5.22, §5.3.2.2): deterministic, though it
 * does not look it. P1's two tag-3 messages go to h0 (the earliest posted
 * receive that accepts them) and h1; its tag-2 message to the blocking
 * receive, which by nonovertaking completes after both. P2's tag-3 send
 * comes after P0 heard back from that receive, so it can match neither h0
 * nor h1. Without knowing h1's tag when the blocking receive completes
 * (MPI_Request_get_status), h0 would look pending, and P2's send a
 * potential match of it. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, a = 0, b = 0, c = 0, d = 0;
  MPI_Request h0, h1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &h0); // h0
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &h1); // h1
    MPI_Recv(&c, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // tag 2
    MPI_Send(&c, 1, MPI_INT, 2, 100, MPI_COMM_WORLD);
    MPI_Wait(&h0, MPI_STATUS_IGNORE);
    MPI_Wait(&h1, MPI_STATUS_IGNORE);
    MPI_Recv(&d, 1, MPI_INT, 2, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    a = 1;
    MPI_Send(&a, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    MPI_Send(&a, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    MPI_Send(&a, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&d, 1, MPI_INT, 0, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&d, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
