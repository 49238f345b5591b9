/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--timeout,60 */
/* Rank 0 polls MPI_Testany over two wildcard receives, but only rank 1
 * sends, once: after the first receive completes the loop polls the
 * second forever, while ranks 1 and 2 wait in MPI_Finalize. A poll series
 * of MPI_Testany stands for MPI_Waitany on the rank's outstanding
 * requests; the wait-for graph used to count the completed first receive
 * among them ("slow, not stuck"), so the hang ran into the timeout (soak
 * seed 4406: 21 reference runs of 10 s each, the same loop over three
 * receives with two of them completed). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, in[2] = {0, 0}, out = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request requests[2];
    int done = 0;
    for (int i = 0; i < 2; i++)
      MPI_Irecv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &requests[i]);
    while (done < 2) {
      int index, flag = 0;
      MPI_Testany(2, requests, &index, &flag, MPI_STATUS_IGNORE); // expect: deadlock rank=0
      if (flag && index != MPI_UNDEFINED)
        done++;
    }
    printf("rank 0: %d %d\n", in[0], in[1]);
  } else if (rank == 1) {
    MPI_Send(&out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize(); // expect: deadlock rank=1 rank=2
  return 0;
}
