/* mbhybrid-test: np=3 exit=1 interleavings=1 */
/* Issue 39, remote races: rank 0 exposes its window once to
 * ranks 1 and 2 (MPI_Win_post of both, MPI_Win_wait), and both MPI_Put
 * to its first int: two origins in one exposure epoch are not ordered
 * (MPI-4.0 §12.7). pscw_two_exposures.c is the twin. */
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
    MPI_Win_post(both, 0, win);
    MPI_Win_wait(win);
    printf("rank 0 holds %d\n", base[0]);
  } else if (rank == 1) {
    MPI_Win_start(root, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=1
    MPI_Win_complete(win);
  } else {
    MPI_Win_start(root, 0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win); // expect: rma-race rank=2
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
