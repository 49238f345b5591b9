/* mbhybrid-test: np=3 exit=0 interleavings=2 */
/* A wildcard MPI_Recv_init started in a loop: each MPI_Start is a wildcard
 * event, and the first can take rank 1's message or rank 2's. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, i;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request req;
    MPI_Status st;
    MPI_Recv_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
    for (i = 0; i < 2; i++) {
      MPI_Start(&req); // the wildcard start
      MPI_Wait(&req, &st);
      printf("event %d from %d\n", i, st.MPI_SOURCE);
    }
    MPI_Request_free(&req);
  } else {
    v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
