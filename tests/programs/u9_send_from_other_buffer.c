/* mbhybrid-test: np=2 exit=0 */
/* Twin of u8_send_from_pending_recv.c: the handshake sends from tmp[1],
 * which no pending operation owns. Clean. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, tmp[2] = {0, 0};
  MPI_Request request;
  MPI_Status status;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int peer = 1 - rank;
  MPI_Irecv(&tmp[0], 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &request);
  MPI_Send(&tmp[1], 1, MPI_INT, peer, 99, MPI_COMM_WORLD);
  MPI_Wait(&request, &status);
  printf("rank %d heard from %d\n", rank, status.MPI_SOURCE);
  MPI_Finalize();
  return 0;
}
