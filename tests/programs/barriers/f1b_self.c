/* SCENARIOS.md F1b (seed 004 Example 1 altered): the barrier orders
 * nothing a wildcard could see: irrelevant. */
#include <mpi.h>
int main(int argc, char **argv) {
  int x = 0, v = 22;
  MPI_Request h, s;
  MPI_Init(&argc, &argv);
  MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &h);
  MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &s);
  MPI_Wait(&h, MPI_STATUS_IGNORE);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
