/* mbhybrid-test: np=4 exit=3 interleavings=1 options=--loop-abstraction,auto */
/* Issue 37's miniFE pattern (make_local_matrix.hpp:258) in C: every rank
 * posts one wildcard MPI_Irecv per other rank in a loop, into slot i of a
 * heap array, and completes them together with MPI_Waitall; the slots are
 * only summed and printed. Which message lands in which slot decides no
 * branch and no MPI call, so `build` marks the loop for abstraction and
 * --loop-abstraction auto runs one interleaving instead of 3!^4 = 1,296
 * (exit 3: the report says the abstracted choice points were not
 * explored). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = size - 1;
  int *slots = malloc(n * sizeof(int));
  MPI_Request *req = malloc(n * sizeof(MPI_Request));
  for (int i = 0; i < n; i++)
    MPI_Irecv(&slots[i], 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &req[i]);
  int mine = 10 * rank + 1;
  for (int p = 0; p < size; p++)
    if (p != rank)
      MPI_Send(&mine, 1, MPI_INT, p, 99, MPI_COMM_WORLD);
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  int sum = 0;
  for (int i = 0; i < n; i++)
    sum += slots[i];
  printf("rank %d sum %d\n", rank, sum);
  free(slots);
  free(req);
  MPI_Finalize();
  return 0;
}
