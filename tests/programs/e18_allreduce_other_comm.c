/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 16: the ranks call the same blocking MPI_Allreduce, but on
 * different communicators (MPI_COMM_WORLD and a duplicate of it). MPI
 * hangs: neither reduction ever has all its members. The wait-for graph
 * confirms it at once, naming both calls, instead of the run ending at
 * the timeout. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, x = 1, y = 0;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0)
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expect: deadlock rank=0
  else
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup); // expect: deadlock rank=1
  printf("%d: %d\n", rank, y);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
