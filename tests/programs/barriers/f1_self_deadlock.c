/* SCENARIOS.md F1 (seed 004 Example 1): one rank waits for a message it
 * sends only after the wait: deadlock, and no verdict on the barrier. */
#include <mpi.h>
int main(int argc, char **argv) {
  int x = 0, v = 22;
  MPI_Request h, s;
  MPI_Init(&argc, &argv);
  MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &h);
  MPI_Wait(&h, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &s);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
