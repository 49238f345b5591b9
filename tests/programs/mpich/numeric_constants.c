/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 18: `MPI_ANY_TAG` and `MPI_PROC_NULL` written as MPICH's numeric
 * values (-1 both), as some codes do. MPI accepts them; so must mbhybrid:
 * a send to rank -1 goes nowhere, a receive from rank -1 completes at
 * once with an empty status, and a receive with tag -1 takes any tag.
 * (Open MPI's `MPI_PROC_NULL` is -2: this program is MPICH's only.) */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 7, got = 0;
  MPI_Status status;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Send(&v, 1, MPI_INT, -1, 0, MPI_COMM_WORLD);
  MPI_Recv(&got, 1, MPI_INT, -1, 0, MPI_COMM_WORLD, &status);
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_INT, 1, 42, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&got, 1, MPI_INT, 0, -1, MPI_COMM_WORLD, &status);
    printf("got %d with tag %d\n", got, status.MPI_TAG);
  }
  MPI_Finalize();
  return 0;
}
