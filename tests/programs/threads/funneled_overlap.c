/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-fopenmp */
/* Issue 40: serialized_overlap.c under MPI_THREAD_FUNNELED, where only
 * the main thread may call MPI (MPI-4.0 §11.6.1): both OpenMP threads of
 * rank 0 make the same MPI_Sendrecv, certainly at once. The second call
 * is reported as the most precise error there is: a call off the main
 * thread when it is one, else the main thread's call while another
 * thread was in MPI (whose own call off the main thread is reported
 * too). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED)
    MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
#pragma omp parallel num_threads(2)
    {
      int t = omp_get_thread_num(), out = t, in = -1;
      MPI_Sendrecv(&out, 1, MPI_INT, 1, t, &in, 1, MPI_INT, 1, 10 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: thread-level rank=0
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
