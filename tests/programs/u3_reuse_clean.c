/* mbhybrid-test: np=2 exit=0 */
/* Issue 19: no buffer-reuse. The send and receive buffers are touched only
 * after their MPI_Wait (or a successful MPI_Test); another array is read
 * and written while the requests are pending; a send buffer is read (MPI-3
 * allows it) while its send is pending. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 8192

static double sendbuf[N], recvbuf[N], other[N];

int main(int argc, char **argv) {
  int rank, peer, flag = 0;
  double sum = 0;
  MPI_Request requests[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  peer = 1 - rank;
  for (int i = 0; i < N; i++) sendbuf[i] = rank + i;
  MPI_Irecv(recvbuf, N, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(sendbuf, N, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &requests[1]);
  for (int i = 0; i < N; i++) other[i] = other[i] * 2 + i; /* a different array */
  memset(other, 0, sizeof other);
  for (int i = 0; i < N; i++) sum += sendbuf[i]; /* reading a send buffer */
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  sendbuf[0] = recvbuf[0]; /* both complete */
  MPI_Isend(sendbuf, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &requests[1]);
  MPI_Recv(recvbuf, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  while (!flag) MPI_Test(&requests[1], &flag, MPI_STATUS_IGNORE);
  sendbuf[1] = recvbuf[1]; /* after a successful test */
  printf("rank %d: %g %g\n", rank, sum, sendbuf[1]);
  MPI_Finalize();
  return 0;
}
