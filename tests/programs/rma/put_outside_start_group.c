/* mbhybrid-test: np=3 exit=1 interleavings=1 options=--timeout,10 */
/* Issue 39 (MPI-4.0 §12.5.2): rank 2 starts an access epoch for the
 * ranks that expose their windows, rank 0 only, and puts to ranks 0 and
 * 1. put_inside_start_group.c exposes and starts for both (EXPOSED 2). */
#include <mpi.h>

#define EXPOSED 1

int main(int argc, char **argv) {
  int rank, *base, one = 1, origin = 2, targets[2] = {0, 1};
  MPI_Win win;
  MPI_Group world, origins, access;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &origin, &origins);
  MPI_Group_incl(world, EXPOSED, targets, &access);
  if (rank < EXPOSED) {
    MPI_Win_post(origins, 0, win);
    MPI_Win_wait(win);
  } else if (rank == 2) {
    MPI_Win_start(access, 0, win);
    MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&access);
  MPI_Group_free(&origins);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
