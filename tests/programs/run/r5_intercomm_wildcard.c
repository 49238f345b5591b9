/* `mbhybrid run` (issue 14): wildcards on an intercommunicator, which
 * deterministic mode does not decide. Even and odd ranks form two groups
 * joined by an intercommunicator; rank 0 takes one message from each odd
 * rank with MPI_Irecv(MPI_ANY_SOURCE) + MPI_Wait, and one more after
 * polling MPI_Iprobe(MPI_ANY_SOURCE). The run must end, with each such
 * receive counted as not decided by logical time. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, v = 0, flag = 0;
  MPI_Comm local, inter;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
  int odd = size / 2;
  if (rank == 0) {
    int sum = 0;
    for (int i = 0; i < odd; i++) {
      MPI_Request r;
      MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, inter, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      sum += v;
    }
    MPI_Status st;
    while (!flag)
      MPI_Iprobe(MPI_ANY_SOURCE, 1, inter, &flag, &st);
    MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 1, inter, MPI_STATUS_IGNORE);
    printf("sum %d last %d\n", sum, v);
  } else if (rank % 2) {
    v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 0, inter);
    if (rank == 1)
      MPI_Send(&v, 1, MPI_INT, 0, 1, inter);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return 0;
}
