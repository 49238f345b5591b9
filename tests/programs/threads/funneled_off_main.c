/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-fopenmp */
/* Issue 40: under MPI_THREAD_FUNNELED only the main thread may call MPI
 * (MPI-4.0 §11.6.1). Here OpenMP's second thread makes the exchange: an
 * error at each call, naming the thread. Its twin, funneled_master.c,
 * makes the same calls from the main thread. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int provided, rank, v;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  v = rank;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) {
      if (rank == 1)
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // expect: thread-level rank=1
      else
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: thread-level rank=0
    }
  }
  printf("rank %d has %d\n", rank, v);
  MPI_Finalize();
  return 0;
}
