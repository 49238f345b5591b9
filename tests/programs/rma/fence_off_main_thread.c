/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-fopenmp */
/* Issue 39 with issue 40: `MPI_Init` gives MPI_THREAD_SINGLE, and the
 * fence epoch of a put is opened and closed from OpenMP's second thread:
 * thread-level errors at the fences' lines, as for any MPI call. */
#include <mpi.h>
#include <omp.h>

int main(int argc, char **argv) {
  int rank, *base, one = 1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
      MPI_Win_fence(0, win); // expect: thread-level rank=0 rank=1
      MPI_Put(&one, 1, MPI_INT, 1 - rank, 0, 1, MPI_INT, win); // expect: thread-level rank=0 rank=1
      MPI_Win_fence(0, win); // expect: thread-level rank=0 rank=1
    }
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
