/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Nonblocking collectives overlapping point-to-point, correctly: ranks
 * wait on collectives every member posted while others block in receives
 * or still compute, complete them with Wait, Waitall, Waitany and a Test
 * loop, on MPI_COMM_WORLD and on a duplicate. Nothing may be reported. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, v = 0, sum = 0, root = 7, done = 0, which;
  MPI_Comm dup;
  MPI_Request coll[2], p2p[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;

  /* P2 computes before posting: the others wait on requests that can
   * complete, and P2 runs outside MPI meanwhile. */
  if (rank == 2)
    usleep(300000);
  MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &coll[0]);
  MPI_Ibcast(&root, 1, MPI_INT, 0, dup, &coll[1]);
  MPI_Irecv(&v, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &p2p[0]);
  MPI_Isend(&rank, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &p2p[1]);
  MPI_Waitall(2, p2p, MPI_STATUSES_IGNORE);
  if (rank == 0) {
    MPI_Wait(&coll[0], MPI_STATUS_IGNORE);
    MPI_Waitany(1, &coll[1], &which, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Waitall(2, coll, MPI_STATUSES_IGNORE);
  } else {
    while (!done)
      MPI_Test(&coll[0], &done, MPI_STATUS_IGNORE);
    MPI_Wait(&coll[1], MPI_STATUS_IGNORE);
  }

  /* P1 waits in a receive while its barrier is still pending; P0 waits
   * on the barrier (every member posted it) before it sends. */
  MPI_Ibarrier(dup, &coll[0]);
  if (rank == 0) {
    MPI_Wait(&coll[0], MPI_STATUS_IGNORE);
    MPI_Send(&sum, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&coll[0], MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&coll[0], MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return sum == 3 && root == 7 ? 0 : 1;
}
