/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Issue 16: both ranks exchange with MPI_Sendrecv, but each sends a tag
 * the other does not receive. Each receive half waits for a message the
 * other rank never sends: the wait-for graph confirms the deadlock (a
 * blocked Sendrecv waits as its receive half does). */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, out, in;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int other = 1 - rank;
  out = rank;
  int send_tag = 10 + rank, recv_tag = 20 + rank;
  if (rank == 0)
    MPI_Sendrecv(&out, 1, MPI_INT, other, send_tag, &in, 1, MPI_INT, other, recv_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=0
  else
    MPI_Sendrecv(&out, 1, MPI_INT, other, send_tag, &in, 1, MPI_INT, other, recv_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
  MPI_Finalize();
  return 0;
}
