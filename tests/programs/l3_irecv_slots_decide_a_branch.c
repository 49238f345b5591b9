/* mbhybrid-test: np=3 exit=1 options=--loop-abstraction,auto */
/* The counter-example to l2: the same loop of wildcard MPI_Irecvs into
 * slot i, completed by MPI_Waitall, but rank 0 then checks which message
 * landed in slot 0. The received value decides a branch, so `build` must
 * not mark the loop for abstraction, even under --loop-abstraction auto:
 * the search explores the orders and finds the one where rank 2's message
 * comes first. */
#include <assert.h>
#include <mpi.h>
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
  if (rank == 0)
    assert(slots[0] != 21); // expect: assertion rank=0
  free(slots);
  free(req);
  MPI_Finalize();
  return 0;
}
