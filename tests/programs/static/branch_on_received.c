/* Two collection loops: the first only stores each result by its index
 * (abstracted), the second lets the received value decide a branch after
 * the loop (explored: another outcome could change what happens next). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, results[64] = {0}, last = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (int i = 1; i < size; i++) { /* collect */
      int v[2];
      MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      results[v[0]] = v[1];
    }
    for (int i = 1; i < size; i++) { /* decide */
      MPI_Recv(&last, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (last == 2) printf("rank 2 answered last\n");
    printf("%d\n", results[1]);
  } else {
    int v[2] = {rank, rank * rank};
    MPI_Send(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
