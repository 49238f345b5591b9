/* mbhybrid-test: np=5 exit=0 interleavings=2 */
/* Wildcard receives on communicators from MPI_Comm_split: world ranks 0, 2
 * and 4 form one (0 receives from 2 and 4 with MPI_ANY_SOURCE: two
 * orders), 1 and 3 the other (1 receives from 3 only: one order). Senders
 * are named by world rank in the report, and a message on one communicator
 * is never a potential match of a receive on the other, though both use
 * the same tag and the same communicator rank 0. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, sub_rank, sub_size, v;
  MPI_Comm sub;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
  MPI_Comm_rank(sub, &sub_rank);
  MPI_Comm_size(sub, &sub_size);
  if (sub_rank == 0) {
    int got = 0;
    for (int k = 1; k < sub_size; k++) {
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, sub, MPI_STATUS_IGNORE); // sub wildcard
      got += v;
    }
    printf("color %d got %d\n", rank % 2, got);
  } else {
    v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 5, sub);
  }
  MPI_Comm_free(&sub);
  MPI_Finalize();
  return 0;
}
