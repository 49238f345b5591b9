/* mbhybrid-test: np=2 exit=1 interleavings=1 options=--timeout,60 */
/* Rank 0 posts two wildcard receives and one from rank 1 with a tag rank 1
 * never sends, then polls that last one with MPI_Test; rank 1 sends three
 * synchronous messages. The wildcard receives take the first two inside
 * MPI, though the program never completes them, and the third waits
 * forever. The runtime saw both receives complete while serving the poll
 * (and acknowledged their senders), but the wait-for graph still counted
 * them as posted and the third message as takeable by one of them ("slow,
 * not stuck"), so the hang ran into the timeout (soak seed 4480, under
 * --buffering zero, with three senders). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, in[3] = {0, 0, 0}, out = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request requests[3];
    int flag = 0;
    MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &requests[1]);
    MPI_Irecv(&in[2], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &requests[2]);
    while (!flag)
      MPI_Test(&requests[2], &flag, MPI_STATUS_IGNORE); // expect: deadlock rank=0
    printf("rank 0: %d\n", in[2]);
  } else {
    for (int i = 0; i < 3; i++)
      MPI_Ssend(&out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // expect: deadlock rank=1
  }
  MPI_Finalize();
  return 0;
}
