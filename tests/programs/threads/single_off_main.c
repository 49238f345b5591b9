/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-fopenmp */
/* Issue 40: `MPI_Init` gives MPI_THREAD_SINGLE: a barrier from OpenMP's
 * second thread is an error at its line. */
#include <mpi.h>
#include <omp.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1)
      MPI_Barrier(MPI_COMM_WORLD); // expect: thread-level rank=0 rank=1
  }
  MPI_Finalize();
  return 0;
}
