/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-fopenmp */
/* Issue 40: under MPI_THREAD_SERIALIZED only one thread may be in MPI at
 * a time (MPI-4.0 §11.6). Here both OpenMP threads of rank 0 make the
 * same MPI_Sendrecv, and the overlap is certain, whatever the schedule:
 * each thread's receive needs a message rank 1 sends only after it got
 * both threads' sends, so the thread that calls second finds the first
 * still inside its call. MPICH and Open MPI run it (they lock inside);
 * the program is still erroneous. Its twin, serialized_critical.c, makes
 * the calls one at a time. */
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
