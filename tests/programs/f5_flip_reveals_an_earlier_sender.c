/* mbhybrid-test: np=4 exit=1 */
/* Issue 11, soak seed 3111 shrunk: rank 3 takes two MPI_ANY_SOURCE
 * messages (from ranks 0 and 2) and fails its assertion when rank 0's
 * comes first; only otherwise does it go on to send to rank 0, whose two
 * wildcard receives take rank 1's and rank 3's messages. Rank 0's first
 * receive comes before rank 3's in the search order, and in a first run
 * where rank 3 failed it had one sender only: rank 3's sender appears
 * only below the flip of rank 3's receive. The search must still run
 * rank 0 taking rank 3's message first (3 outcomes, under both clocks). */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, first = -1, second = -1;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 3) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &st);
    first = st.MPI_SOURCE;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &st);
    assert(first != 0); // expect: assertion rank=3
    MPI_Request sent;
    MPI_Isend(&rank, 1, MPI_INT, 0, 200, MPI_COMM_WORLD, &sent);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
  }
  if (rank == 0 || rank == 2)
    MPI_Send(&rank, 1, MPI_INT, 3, 100, MPI_COMM_WORLD);
  if (rank == 1)
    MPI_Send(&rank, 1, MPI_INT, 0, 200, MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 200, MPI_COMM_WORLD, &st);
    first = st.MPI_SOURCE;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 200, MPI_COMM_WORLD, &st);
    second = st.MPI_SOURCE;
    printf("sig 0: took %d then %d\n", first, second);
  }
  MPI_Finalize();
  return 0;
}
