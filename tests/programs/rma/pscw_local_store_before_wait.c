/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 39, window memory: rank 0 exposes its window to rank 1
 * (MPI_Win_post) and stores to the int rank 1 puts into before its
 * MPI_Win_wait: the put completes at rank 0 only at MPI_Win_wait
 * (MPI-4.0 §12.5.2), so the two race (§12.7). The twin,
 * pscw_local_store_after_wait.c, stores after MPI_Win_wait. */
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
    base[0] = 5; // expect: rma-race rank=0
    MPI_Win_wait(win);
    printf("rank 0 holds %d\n", base[0]);
  } else {
    MPI_Win_start(other, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=1
    MPI_Win_complete(win);
  }
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
