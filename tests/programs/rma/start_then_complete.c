/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39: complete_without_start.c with MPI_Win_start: an empty access
 * epoch, correct. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, *base, peer;
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
  } else {
    MPI_Win_start(other, 0, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
