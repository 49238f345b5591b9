/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Twin of pscw_put_write_before_complete.c: rank 1 writes the origin
 * buffer after the MPI_Win_complete that completes its MPI_Put. No
 * finding. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 1, peer;
  MPI_Win win;
  MPI_Group world, other;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  peer = 1 - rank;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &other);
  if (rank == 0) {
    MPI_Win_post(other, 0, win);
    MPI_Win_wait(win);
    printf("rank 0 holds %d\n", *base);
  } else {
    MPI_Win_start(other, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
    value = 2;
  }
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
