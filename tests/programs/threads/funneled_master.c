/* mbhybrid-test: np=2 exit=0 interleavings=1 cflags=-fopenmp */
/* Issue 40: funneled_off_main.c's twin: the exchange is made by the main
 * thread (`omp master`) while the other thread waits at the barrier, as
 * MPI_THREAD_FUNNELED allows: clean and complete. */
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
#pragma omp master
    {
      if (rank == 1)
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      else
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
#pragma omp barrier
  }
  printf("rank %d has %d\n", rank, v);
  MPI_Finalize();
  return 0;
}
