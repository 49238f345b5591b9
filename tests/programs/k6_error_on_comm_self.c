/* mbhybrid-test: np=2 exit=1 */
/* An MPI error on MPI_COMM_SELF under the default handler: rank 1 sends to
 * rank 1 of a communicator of one rank. MPI's own handler would end the
 * process (under Open MPI often without a message the report can read);
 * the runtime handles it as on world: an `invalid-argument` at the send. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, value = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_SELF); // expect: invalid-argument rank=1
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
