/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Issue 39: put_outside_start_group.c with ranks 0 and 1 exposed and in
 * the group of MPI_Win_start: correct. */
#include <mpi.h>

#define EXPOSED 2

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
