/* mbhybrid-test: np=3 exit=1 */
/* A hang the wait-for graph must see (issue 12: every hang is confirmed as
 * a deadlock or explained): rank 1's synchronous send is never received,
 * so it never reaches the gather; rank 0 leaves the gather early (it is
 * not the root) and frees the communicator, where the runtime finishes
 * the gather's clock exchange and signature check, which wait for rank 1.
 * Rank 0 must show as blocked (in MPI_Finalize), not as running, or the
 * hang is reported only as a timeout. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, x = 1, all[3];
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 1)
    MPI_Ssend(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD); // expect: deadlock rank=1
  MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, 2, dup); // expect: deadlock rank=2
  MPI_Comm_free(&dup);
  printf("rank %d done\n", rank);
  MPI_Finalize(); // expect: deadlock rank=0
  return 0;
}
