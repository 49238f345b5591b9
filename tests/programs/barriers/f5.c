/* SCENARIOS.md F5 (seed 004 Example 5): irrelevant barrier. */
#include <mpi.h>
int main(int argc, char **argv) {
  int rank, v = 0, a = 0, b = 0;
  MPI_Request h;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Send(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Send(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  } else {
    MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &h);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
    MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&h, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
