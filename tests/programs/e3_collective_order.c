/* mbhybrid-test: np=2 exit=1 */
/* SCENARIOS.md E3 (seed 000 Fig 2.6): the ranks call the same two
 * collectives in different orders. Whatever the MPI library does with it
 * (hang, or complete by luck), it is a collective mismatch. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD); // expect: collective-mismatch rank=0
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD); // expect: collective-mismatch rank=1
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
