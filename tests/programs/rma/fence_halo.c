/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Issue 39: a halo exchange on a ring with fences: each rank puts its
 * value into its neighbours' windows between two fences, then checks what
 * it received. Correct: no epoch error, no race; complete. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, left, right, mine, *halo;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  left = (rank + size - 1) % size;
  right = (rank + 1) % size;
  mine = 100 + rank;
  /* MPI_Win_create on memory of MPI_Alloc_mem: MPICH 4.0.2's
   * MPI_Win_allocate misplaces these puts on one node, without mbhybrid
   * too. */
  MPI_Alloc_mem(2 * sizeof(int), MPI_INFO_NULL, &halo);
  MPI_Win_create(halo, 2 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                 MPI_COMM_WORLD, &win);
  halo[0] = halo[1] = -1;
  for (int step = 0; step < 2; step++) {
    MPI_Win_fence(0, win);
    MPI_Put(&mine, 1, MPI_INT, left, 1, 1, MPI_INT, win);
    MPI_Put(&mine, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (halo[0] != 100 + left || halo[1] != 100 + right)
      printf("rank %d: wrong halo %d %d\n", rank, halo[0], halo[1]);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  printf("rank %d halo %d %d\n", rank, halo[0], halo[1]);
  MPI_Win_free(&win);
  MPI_Free_mem(halo);
  MPI_Finalize();
  return 0;
}
