/* mbhybrid-test: np=4 exit=1 interleavings=4 */
/* Issue 11: ranks 2 and 3 each send one message to rank 0 and one to
 * rank 1; ranks 0 and 1 each take two wildcard receives, swap what their
 * first receive got, and block on each other only when both first
 * receives came from rank 3. The two first receives are concurrent and
 * both get Lamport clock 0: flipping one must leave the other explorable,
 * or the one combination that deadlocks is never run. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, first = -1, second = -1, theirs = -1;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank >= 2) {
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    first = st.MPI_SOURCE;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    second = st.MPI_SOURCE;
    MPI_Sendrecv(&first, 1, MPI_INT, 1 - rank, 1, &theirs, 1, MPI_INT, 1 - rank, 1,
                 MPI_COMM_WORLD, &st);
    if (first == 3 && theirs == 3)
      MPI_Recv(&v, 1, MPI_INT, 1 - rank, 2, MPI_COMM_WORLD, &st); // expect: deadlock rank=0 rank=1
  }
  printf("sig %d: %d %d\n", rank, first, second);
  MPI_Finalize();
  return 0;
}
