/* mbhybrid-test: np=4 exit=0 interleavings=3 */
/* SCENARIOS.md S8 (seed 000 §5.2.1, Fig 5.4): P1's MPI_Ssend returns only
 * once one of P0's wildcard receives has taken it, so P3's send, which
 * waits for P1's next message, comes after P0's first receive matched and
 * can never be its match; P2's send is concurrent with it and can. The
 * acknowledgement carries the receiver's clock to P1, and so to P3. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // first
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    v = 1;
    MPI_Ssend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD);
  } else if (rank == 2) {
    v = 2;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    v = 3;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
