/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* Issue 38's program: MPI-4.0 §6.1 lets the root of MPI_Bcast (rank 2)
 * leave before the others enter, so its send can be the first receive's
 * match and the assertion fails. MPICH's own Bcast root waits; the forced
 * replay must not turn that into a deadlock. */
#include <assert.h>
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 0, b = 0;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    assert(st.MPI_SOURCE == 1); // expect: assertion rank=0
    MPI_Bcast(&b, 1, MPI_INT, 2, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
  } else if (rank == 1) {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Bcast(&b, 1, MPI_INT, 2, MPI_COMM_WORLD);
  } else {
    MPI_Bcast(&b, 1, MPI_INT, 2, MPI_COMM_WORLD);
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
