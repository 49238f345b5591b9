/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Twin of get_accumulate_read_before_unlock_all.c: rank 1 reads the value
 * MPI_Get_accumulate fetched (40) after the MPI_Win_unlock_all that
 * completes it. No finding. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, *base, add = 2, old = -1, seen = -1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 40 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  if (rank == 1)
    MPI_Get_accumulate(&add, 1, MPI_INT, &old, 1, MPI_INT, 0, 0, 1, MPI_INT,
                       MPI_SUM, win);
  MPI_Win_unlock_all(win);
  if (rank == 1)
    seen = old;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("rank 0 holds %d\n", *base);
  if (rank == 1)
    printf("rank 1 old %d seen %d\n", old, seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
