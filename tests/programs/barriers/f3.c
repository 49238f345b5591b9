/* SCENARIOS.md F3 (seed 004 Example 3): irrelevant; x is always 33 by
 * non-overtaking, barrier or not. */
#include <assert.h>
#include <mpi.h>
int main(int argc, char **argv) {
  int rank, x = 0, a = 33, b = 22;
  MPI_Request h, s1, s2;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &h);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Wait(&h, MPI_STATUS_IGNORE);
    assert(x == 33);
  } else {
    MPI_Isend(&a, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &s1);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Isend(&b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &s2);
    MPI_Wait(&s1, MPI_STATUS_IGNORE);
    MPI_Wait(&s2, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
