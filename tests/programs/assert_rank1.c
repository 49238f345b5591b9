/* mbhybrid-test: np=2 exit=1 */
/* Rank 1 receives a value it does not expect and its assertion fails. */
#include <assert.h>
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, value = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    value = 41;
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    assert(value == 42); // expect: assertion rank=1
  }
  MPI_Finalize();
  return 0;
}
