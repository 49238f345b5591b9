/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* SCENARIOS.md E1 (seed 000 Fig 2.4): each rank first receives from the
 * other, then sends. Both wait forever in MPI_Recv: a deadlock, confirmed on
 * the wait-for graph (rank 0 -> rank 1 -> rank 0). */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, value = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int other = 1 - rank;
  MPI_Recv(&value, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=0 rank=1
  MPI_Send(&value, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
