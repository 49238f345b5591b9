/* bench/master_worker.c: a master hands TASKS tasks (the argument, default
 * 2000) to whichever worker asks first (MPI_ANY_SOURCE); each task is about
 * 50 us of arithmetic. The `mbhybrid run` benchmark (BENCHMARKS.md,
 * "Deterministic execution"): rank 0 prints the wall seconds. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double work(int task) {
  double x = task;
  for (int i = 0; i < 20000; i++)
    x = x * 0.999999 + 1e-6 * i;
  return x;
}

int main(int argc, char **argv) {
  int rank, size, tasks = argc > 1 ? atoi(argv[1]) : 2000;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double start = MPI_Wtime(), sum = 0;
  if (rank == 0) {
    int next = 0, stopped = 0;
    while (stopped < size - 1) {
      double result;
      MPI_Status st;
      MPI_Recv(&result, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
      sum += result;
      int task = next < tasks ? next++ : -1;
      if (task < 0)
        stopped++;
      MPI_Send(&task, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
    }
    printf("%.3f s (checksum %.1f)\n", MPI_Wtime() - start, sum);
  } else {
    double result = 0;
    for (;;) {
      int task;
      MPI_Send(&result, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
      MPI_Recv(&task, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (task < 0)
        break;
      result = work(task);
    }
  }
  MPI_Finalize();
  return 0;
}
