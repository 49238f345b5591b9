/* mbhybrid-test: np=2 exit=0 interleavings=1 cflags=-fopenmp */
/* Issue 40: the twin of serialized_overlap.c. Both OpenMP threads of rank
 * 0 call MPI under MPI_THREAD_SERIALIZED, one at a time: each makes its
 * exchange inside one `omp critical`, and rank 1 answers each send before
 * the next, so no call waits for the other thread's. Clean and complete. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED)
    MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num(), out = t, in = -1;
#pragma omp critical(mpi)
      MPI_Sendrecv(&out, 1, MPI_INT, 1, 0, &in, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("thread %d got %d\n", t, in);
    }
  } else {
    for (int i = 0; i < 2; i++) {
      int v;
      MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      v += 100;
      MPI_Send(&v, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
