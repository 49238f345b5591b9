/* mbhybrid-test: np=2 exit=1 */
/* Rank 1 sends to a rank that does not exist under the default handler
 * (MPI_ERRORS_ARE_FATAL): reported as `invalid-argument` at the send,
 * naming the rank argument, and the job stops as MPI would stop it. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, size, value = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 1) {
    MPI_Send(&value, 1, MPI_INT, size, 0, MPI_COMM_WORLD); // expect: invalid-argument rank=1
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
