/* SCENARIOS.md F2 (seed 004 Example 2): irrelevant barrier. */
#include <mpi.h>
int main(int argc, char **argv) {
  int rank, x = 0, v;
  MPI_Request h, s;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    v = 22;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &h);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &s);
    MPI_Wait(&h, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
  } else {
    v = 33;
    MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &s);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Wait(&s, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
