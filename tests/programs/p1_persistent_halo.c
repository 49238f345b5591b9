/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Persistent requests: a halo exchange around a ring, made once with
 * MPI_Send_init/MPI_Recv_init and restarted every iteration with
 * MPI_Startall or MPI_Start, completed by MPI_Waitall, MPI_Waitany or
 * MPI_Wait, then freed. Clean. Which request each MPI_Waitany returns
 * only decides which buffer it filled, so its order is no choice: one
 * interleaving, complete. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, it, sum = 0;
  int out, from_left = 0, from_right = 0;
  MPI_Request reqs[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Recv_init(&from_left, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv_init(&from_right, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[1]);
  MPI_Send_init(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[2]);
  MPI_Ssend_init(&out, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[3]);
  for (it = 0; it < 5; it++) {
    out = rank * 10 + it;
    if (it % 3 == 0) {
      MPI_Startall(4, reqs);
      MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    } else if (it % 3 == 1) {
      /* Completed requests stay in the array, inactive: Waitany skips
       * them (no missing-start). */
      int i, index;
      MPI_Startall(4, reqs);
      for (i = 0; i < 4; i++)
        MPI_Waitany(4, reqs, &index, MPI_STATUS_IGNORE);
    } else {
      int i;
      for (i = 0; i < 4; i++)
        MPI_Start(&reqs[i]);
      for (i = 0; i < 4; i++)
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
    sum += from_left + from_right;
  }
  for (it = 0; it < 4; it++)
    MPI_Request_free(&reqs[it]);
  /* Rank 0 prints for all: lines of several ranks could mix. */
  int sums[64];
  MPI_Gather(&sum, 1, MPI_INT, sums, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (it = 0; it < size && it < 64; it++)
      printf("rank %d sum %d\n", it, sums[it]);
  MPI_Finalize();
  return 0;
}
