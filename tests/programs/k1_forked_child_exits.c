/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 12: rank 1 forks a child (as a program running a helper tool
 * would) while a receive is pending, and the child ends with exit(3).
 * The child shares the rank's trace mapping; its exit must not be
 * recorded as the rank's: no exit finding, and no request leak from leak
 * checks run in the child. The rank itself completes its receive and
 * finalizes: the run is clean. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, value = 0;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Irecv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &request);
    pid_t child = fork();
    if (child == 0)
      exit(3);
    int status;
    waitpid(child, &status, 0);
    printf("child exited with %d\n", WEXITSTATUS(status));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    value = 42;
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
