/* A program without wildcard receives: no barrier can change a match, so
 * every barrier is irrelevant by Fib's definition, and the audit says why
 * in those words rather than as if it had judged wildcard receives. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, value = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  if (rank == 0)
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  else if (rank == 1)
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  printf("rank %d: %d\n", rank, value);
  MPI_Finalize();
  return 0;
}
