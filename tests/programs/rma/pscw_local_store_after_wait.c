/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39, window memory: pscw_local_store_before_wait.c with rank 0's
 * store after its MPI_Win_wait, which completes rank 1's put first
 * (MPI-4.0 §12.5.2): rank 0 holds 5. No race; complete. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 7, peer;
  MPI_Group world, other;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = base[3] = 0;
  peer = 1 - rank;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &other);
  if (rank == 0) {
    MPI_Win_post(other, 0, win);
    MPI_Win_wait(win);
    base[0] = 5;
    printf("rank 0 holds %d\n", base[0]);
  } else {
    MPI_Win_start(other, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
