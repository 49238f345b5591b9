/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Issue 37: a halo exchange around a ring that handles whichever
 * neighbour's message is complete first (MPI_Testany over specific-source
 * requests, no wildcard). The index only picks the ghost cell the message
 * goes to, so every order ends in the same state: `build` marks the
 * Testany as no choice, and 10 steps on 3 ranks (2^30 orders) verify in
 * one interleaving, complete. x2_testany_order.c is its twin whose order
 * decides a branch. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nb[2] = {(rank + size - 1) % size, (rank + 1) % size};
  double *u = calloc(N + 2, sizeof(double));
  double recv[2][1], send[2][1];
  for (int i = 1; i <= N; i++)
    u[i] = rank * 100 + i;
  for (int step = 0; step < 10; step++) {
    MPI_Request rq[2], sq[2];
    for (int k = 0; k < 2; k++)
      MPI_Irecv(recv[k], 1, MPI_DOUBLE, nb[k], step, MPI_COMM_WORLD, &rq[k]);
    send[0][0] = u[1];
    send[1][0] = u[N];
    for (int k = 0; k < 2; k++)
      MPI_Isend(send[k], 1, MPI_DOUBLE, nb[k], step, MPI_COMM_WORLD, &sq[k]);
    int done = 0;
    while (done < 2) {
      int idx, flag;
      MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE); // testany
      if (flag && idx != MPI_UNDEFINED) {
        u[idx == 0 ? 0 : N + 1] = recv[idx][0];
        done++;
      }
    }
    MPI_Waitall(2, sq, MPI_STATUSES_IGNORE);
    for (int i = 1; i <= N; i++)
      u[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
  }
  double s = 0;
  for (int i = 1; i <= N; i++)
    s += u[i];
  printf("rank %d sum %.6f\n", rank, s);
  free(u);
  MPI_Finalize();
  return 0;
}
