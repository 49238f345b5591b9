/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 39, window memory: local_row_loop_same_fence.c with rank 1's put
 * into row 4, next to the row rank 0 writes: the bytes are disjoint,
 * even where the row ends and the next begins. No race; complete. */
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
    MPI_Put(&one, 1, MPI_DOUBLE, 0, 4 * COLS, 1, MPI_DOUBLE, win);
  if (rank == 0)
    for (int j = 0; j < COLS; j++)
      m[3][j] = j * 0.5;
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 row 3 ends %g, row 4 starts %g\n", m[3][COLS - 1], m[4][0]);
  (void)value;
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
