/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Issue 39, remote races: pscw_one_exposure.c with rank 0
 * exposing its window to rank 1, waiting, then to rank 2: the first
 * MPI_Win_wait orders rank 1's put before rank 2's. No race. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value, ranks[2] = {1, 2}, zero = 0;
  MPI_Group world, one, two, both, root;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = 0;
  value = 10 + rank;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &ranks[0], &one);
  MPI_Group_incl(world, 1, &ranks[1], &two);
  MPI_Group_incl(world, 2, ranks, &both);
  MPI_Group_incl(world, 1, &zero, &root);
  if (rank == 0) {
    MPI_Win_post(one, 0, win);
    MPI_Win_wait(win);
    MPI_Win_post(two, 0, win);
    MPI_Win_wait(win);
    printf("rank 0 holds %d\n", base[0]);
  } else if (rank == 1) {
    MPI_Win_start(root, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
  } else {
    MPI_Win_start(root, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&world);
  MPI_Group_free(&one);
  MPI_Group_free(&two);
  MPI_Group_free(&both);
  MPI_Group_free(&root);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
