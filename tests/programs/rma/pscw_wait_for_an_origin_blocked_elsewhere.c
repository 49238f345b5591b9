/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* MPI_Win_wait blocks until every origin of the post's group has called
 * MPI_Win_complete (MPI-4.0 §12.5.2): rank 0 waits for rank 1's access
 * epoch before it sends, and rank 1 waits for that message before it
 * starts the epoch. A deadlock, with both lines. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value = 7, zero = 0, one = 1, token = 0;
  MPI_Group world, target, origin;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  base[0] = 0;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &zero, &target);
  MPI_Group_incl(world, 1, &one, &origin);
  if (rank == 0) {
    MPI_Win_post(origin, 0, win);
    MPI_Win_wait(win); // expect: deadlock rank=0
    MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: deadlock rank=1
    MPI_Win_start(target, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&world);
  MPI_Group_free(&target);
  MPI_Group_free(&origin);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
