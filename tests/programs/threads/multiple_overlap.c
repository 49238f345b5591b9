/* mbhybrid-test: np=2 exit=2 cflags=-fopenmp */
/* Issue 40: the program of serialized_overlap.c under
 * MPI_THREAD_MULTIPLE, where two threads in MPI at once are allowed: not
 * an error, but this version of mbhybrid cannot run it yet; the run
 * stops naming both calls and the level. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE)
    MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num(), out = t, in = -1;
      MPI_Sendrecv(&out, 1, MPI_INT, 1, t, &in, 1, MPI_INT, 1, 10 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("thread %d got %d\n", t, in);
    }
  } else {
    int a, b;
    MPI_Recv(&a, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&b, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    a += 100;
    b += 100;
    MPI_Send(&a, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 0, 11, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
