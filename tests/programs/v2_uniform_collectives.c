/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 19: collectives under conditions every rank agrees on, which the
 * static analysis must not report: the size, a loop bound the root sets
 * and broadcasts, and a flag computed by MPI_Allreduce (tested both as a
 * loop condition and after the loop). No branch depends on input. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, size, rounds = 0, i, local_done, done = 0;
  double value, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1)
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    rounds = 3;
  MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (i = 0; i < rounds; i++) {
    value = rank + i;
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  i = 0;
  while (!done) {
    /* Rank 0 is done after 3 turns, rank 1 after 2: the flag agrees. */
    local_done = i + rank >= 2;
    MPI_Allreduce(&local_done, &done, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    i++;
  }
  if (done && sum > 0)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
