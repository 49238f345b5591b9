/* mbhybrid-test: np=2 exit=1 */
/* The handshake of miniFE's make_local_matrix (ref/src, line 265): each
 * rank posts a receive into tmp[0], then sends from tmp[0] while that
 * receive is pending. The send reads memory MPI owns until the receive
 * completes (MPI-4.0 §3.7.2), as MUST reports too. Reported at the send,
 * with the receive's line. Twin: u9_send_from_other_buffer.c. */
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
  MPI_Send(&tmp[0], 1, MPI_INT, peer, 99, MPI_COMM_WORLD); // expect: buffer-reuse rank=0 rank=1
  MPI_Wait(&request, &status);
  printf("rank %d heard from %d\n", rank, status.MPI_SOURCE);
  MPI_Finalize();
  return 0;
}
