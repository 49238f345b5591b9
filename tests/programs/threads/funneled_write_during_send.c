/* mbhybrid-test: np=2 exit=1 cflags=-fopenmp,-O2 */
/* Under MPI_THREAD_FUNNELED the main thread starts an MPI_Isend while a
 * worker thread is inside a loop it entered with nothing pending, and the
 * loop writes the send's buffer. Loops run their unchecked copy only while
 * nothing is pending and no other thread may call MPI: here the checked
 * copy runs, and the write is found. The flags order the two threads:
 * the send starts after the worker entered its loop, and before its
 * second iteration writes. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#define N 256

static double buf[N];
static int entered, started, finished;

int main(int argc, char **argv) {
  int rank, provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request request;
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {
        while (!__atomic_load_n(&entered, __ATOMIC_ACQUIRE)) {
        }
        MPI_Isend(buf, N, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &request);
        __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
        while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
        }
        MPI_Wait(&request, MPI_STATUS_IGNORE);
      } else {
        for (int i = 0; i < N; i++) {
          if (i == 0)
            __atomic_store_n(&entered, 1, __ATOMIC_RELEASE);
          if (i == 1)
            while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) {
            }
          buf[i] = 1.0; // expect: buffer-reuse rank=0
        }
        __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
      }
    }
  } else if (rank == 1) {
    MPI_Recv(buf, N, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("got %g\n", buf[1]);
  }
  MPI_Finalize();
  return 0;
}
