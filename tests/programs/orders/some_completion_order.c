/* Rank 0 takes one message from each other rank with wildcard receives
 * and an MPI_Testsome loop, and prints the order in which the requests
 * completed with their senders (the differential test runs it with
 * MPI_Waitsome too): every sender-to-receive assignment in every
 * completion order is an outcome, as many as the exhaustive reference
 * finds. With MPI returning several requests together as timing had it,
 * neither search could make every order happen (a user's Testsome loop on
 * 4 ranks missed some, and a forced order diverged). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    MPI_Request req[3];
    int in[3], done = 0, order[3][2];
    for (int i = 0; i < size - 1; i++)
      MPI_Irecv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req[i]);
    while (done < size - 1) {
      int outcount = 0, idx[3];
      MPI_Status st[3];
      MPI_Testsome(size - 1, req, &outcount, idx, st);
      for (int k = 0; k < outcount; k++) {
        order[done][0] = idx[k];
        order[done][1] = st[k].MPI_SOURCE;
        done++;
      }
    }
    printf("sig 0:");
    for (int k = 0; k < done; k++)
      printf(" %d<-%d", order[k][0], order[k][1]);
    printf("\n");
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
