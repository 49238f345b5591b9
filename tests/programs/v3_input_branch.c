/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 19: a clean program whose MPI calls depend on its input: the
 * number of messages rank 0 sends rank 1 is `argv[1]` when given (one
 * otherwise), and a barrier runs only with a second argument. Every rank
 * agrees, so nothing diverges, but the verdict holds for this input only:
 * the static analysis lists the loop on line 17 (`argc`, `argv[1]`) and
 * the branch on line 25 (`argc`). */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, rounds = 1, i, token = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1)
    rounds = atoi(argv[1]);
  for (i = 0; i < rounds; i++) {
    if (rank == 0) {
      token = i;
      MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (argc > 2)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
