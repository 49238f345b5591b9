/* mbhybrid-test: np=3 exit=1 interleavings=2 cflags=-fopenmp */
/* Issue 40: a hybrid ring halo exchange as real codes write it: OpenMP
 * loops (two threads) update the interior between exchanges the main
 * thread makes (MPI_THREAD_FUNNELED). Rank 0 also gathers a checksum from
 * the others with wildcard receives, and assumes rank 1's comes first:
 * the search finds the order in which it does not, in every run the
 * OpenMP schedule allows. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

#define N 64

int main(int argc, char **argv) {
  int provided, rank, size;
  double u[N + 2], next[N + 2];
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
#pragma omp parallel for num_threads(2)
  for (int i = 0; i < N + 2; i++)
    u[i] = rank * 100.0 + i;
  for (int step = 0; step < 4; step++) {
    MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, step, &u[N + 1], 1, MPI_DOUBLE, right, step,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, step, &u[0], 1, MPI_DOUBLE, left, step,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel for num_threads(2)
    for (int i = 1; i <= N; i++)
      next[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
#pragma omp parallel for num_threads(2)
    for (int i = 1; i <= N; i++)
      u[i] = next[i];
  }
  double sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
  for (int i = 1; i <= N; i++)
    sum += u[i];
  if (rank == 0) {
    MPI_Status st;
    double other;
    MPI_Recv(&other, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
    printf("first checksum from rank %d\n", st.MPI_SOURCE);
    assert(st.MPI_SOURCE == 1); // expect: assertion rank=0
    MPI_Recv(&other, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
  } else {
    MPI_Send(&sum, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
