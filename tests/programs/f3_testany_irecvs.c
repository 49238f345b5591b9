/* mbhybrid-test: np=3 exit=0 interleavings=18 */
/* Issue 11, soak seed 1001 shrunk: rank 1 posts three MPI_ANY_SOURCE
 * Irecvs and completes them with a Testany loop; rank 0 sends two
 * messages, rank 2 one. Which Irecv takes rank 2's message (3 ways) and
 * the order Testany returns the requests in (6 ways) are independent:
 * 18 outcomes. Returning another index first moves the receives' final
 * clocks below the flipped choice; the search once left them unexplored
 * there and ran 14 of the 18 while saying "complete". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Request rq[3];
    int rb[3], done = 0;
    for (int i = 0; i < 3; i++)
      MPI_Irecv(&rb[i], 1, MPI_INT, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &rq[i]);
    printf("sig 1:");
    while (done < 3) {
      int idx, flag = 0;
      MPI_Status st;
      MPI_Testany(3, rq, &idx, &flag, &st);
      if (flag && idx != MPI_UNDEFINED) {
        printf(" %d<%d", idx, st.MPI_SOURCE);
        done++;
      }
    }
    printf("\n");
  } else if (rank == 0) {
    MPI_Send(&x, 1, MPI_INT, 1, 100, MPI_COMM_WORLD);
    MPI_Send(&x, 1, MPI_INT, 1, 100, MPI_COMM_WORLD);
  } else {
    MPI_Request sq;
    MPI_Isend(&x, 1, MPI_INT, 1, 100, MPI_COMM_WORLD, &sq);
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
