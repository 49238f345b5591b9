/* mbhybrid-test: np=3 exit=3 interleavings=1 */
/* Issue 39, remote races: rank 1 MPI_Puts two ints of rank 0
 * through a vector target datatype (ints 0 and 2) while rank 2 puts int 1,
 * in one fence epoch. The bytes a datatype with holes touches are not
 * recorded: nothing is reported, and the run's partial reason names the
 * put whose races were not checked, with why. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, value, pair[2] = {21, 23};
  MPI_Datatype every_other;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = base[2] = 0;
  value = 10 + rank;
  MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(pair, 2, MPI_INT, 0, 0, 1, every_other, win);
  else if (rank == 2)
    MPI_Put(&value, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    printf("rank 0 holds %d %d %d\n", base[0], base[1], base[2]);
  MPI_Type_free(&every_other);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
