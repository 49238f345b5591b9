/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 39, window memory: rank 0 writes a whole row of the 8x64 matrix
 * its window exposes, in a loop, while rank 1 puts into an element of
 * that row in the same fence epoch (MPI-4.0 §12.7). One race, whatever
 * the row's length: the loop's stores are one range. The twin,
 * local_row_loop_other_row.c, puts into the next row. */
#include <mpi.h>
#include <stdio.h>

#define COLS 64

int main(int argc, char **argv) {
  int rank, value = 7;
  double (*m)[COLS];
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(8 * COLS * sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &m, &win);
  double one = 1.0;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&one, 1, MPI_DOUBLE, 0, 3 * COLS + 10, 1, MPI_DOUBLE, win); // expect: rma-race rank=1
  if (rank == 0)
    for (int j = 0; j < COLS; j++)
      m[3][j] = j * 0.5; // expect: rma-race rank=0
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 row 3 starts %g\n", m[3][0]);
  (void)value;
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
