/* mbhybrid-test: np=2 exit=1 */
/* The ranks call MPI_Bcast with different roots: a collective mismatch
 * (each rank thinks it sends). MPICH may even complete both calls; the
 * runtime's signature check compares kind and root and stops the job. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD); // expect: collective-mismatch rank=0
  } else {
    MPI_Bcast(&v, 1, MPI_INT, 1, MPI_COMM_WORLD); // expect: collective-mismatch rank=1
  }
  MPI_Finalize();
  return 0;
}
