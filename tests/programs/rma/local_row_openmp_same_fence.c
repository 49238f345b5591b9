/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-fopenmp */
/* Issue 39, window memory from several threads: local_row_loop_same_fence.c
 * with rank 0's row written by an OpenMP loop (4 threads, MPI called by
 * the main thread only, MPI_THREAD_FUNNELED) while rank 1 puts into an
 * element of that row in the same fence epoch (MPI-4.0 §12.7). Every
 * thread's stores are noted: one race, at the loop's store. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define COLS 4096

int main(int argc, char **argv) {
  int rank, provided;
  double (*m)[COLS];
  MPI_Win win;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(4 * COLS * sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &m, &win);
  double one = 1.0;
  MPI_Win_fence(0, win);
  if (rank == 1)
    MPI_Put(&one, 1, MPI_DOUBLE, 0, 2 * COLS + 3000, 1, MPI_DOUBLE, win); // expect: rma-race rank=1
  if (rank == 0) {
#pragma omp parallel for num_threads(4)
    for (int j = 0; j < COLS; j++)
      m[2][j] = j * 0.5; // expect: rma-race rank=0
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0)
    printf("rank 0 row 2 starts %g\n", m[2][0]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
