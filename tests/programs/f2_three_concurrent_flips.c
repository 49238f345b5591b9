/* mbhybrid-test: np=5 exit=1 interleavings=8 */
/* Issue 11, three-receiver form: ranks 3 and 4 each send one message to
 * ranks 0, 1 and 2, which each take two wildcard receives. The receivers
 * deadlock in a cycle only when all three first receives came from rank 4:
 * one combination of the 8, reachable only if every flip leaves the other
 * receivers' concurrent first receives explorable below it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, first = -1, second = -1, mine, all = 0;
  MPI_Comm receivers;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank < 3, rank, &receivers);
  if (rank >= 3) {
    for (int to = 0; to < 3; to++)
      MPI_Send(&v, 1, MPI_INT, to, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    first = st.MPI_SOURCE;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    second = st.MPI_SOURCE;
    mine = first == 4;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, receivers);
    if (all)
      MPI_Recv(&v, 1, MPI_INT, (rank + 1) % 3, 2, MPI_COMM_WORLD, &st); // expect: deadlock rank=0 rank=1 rank=2
  }
  printf("sig %d: %d %d\n", rank, first, second);
  MPI_Comm_free(&receivers);
  MPI_Finalize();
  return 0;
}
