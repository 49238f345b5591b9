/* mbhybrid-test: np=2 exit=1 */
/* SCENARIOS.md E8 (seed 000 Fig 2.10): rank 0 sends 4 bytes, rank 1
 * receives one int. The sizes agree, the type signatures do not. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, i = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(&i, 4, MPI_BYTE, 1, 0, MPI_COMM_WORLD); // expect: type-mismatch rank=0
  } else {
    MPI_Recv(&i, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: type-mismatch rank=1
  }
  MPI_Finalize();
  return 0;
}
