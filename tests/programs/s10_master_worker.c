/* mbhybrid-test: np=4 exit=3 interleavings=1 options=--loop-abstraction,auto */
/* SCENARIOS.md S10 (seed 000 §5.3.4): rank 0 hands out N row blocks of a
 * matrix-vector product to the workers, takes results with a wildcard
 * receive and gives the next block to whoever answered; workers loop until
 * a stop message. The total it prints is 1296 on every interleaving. The master's
 * collection loop only stores each result by its block number, so `build`
 * marks it for abstraction: with --loop-abstraction auto, 1 interleaving. */
#include <mpi.h>
#include <stdio.h>

#define N 8
#define STOP N
#define TAG_WORK 1
#define TAG_RESULT 2

static double row_times_vector(int row) {
  double sum = 0;
  for (int j = 0; j < N; j++) sum += (row + 1) * (j + 1);
  return sum;
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    double results[N] = {0};
    int next = 0, done = 0;
    for (int w = 1; w < size; w++) {
      int block = next < N ? next++ : STOP;
      MPI_Send(&block, 1, MPI_INT, w, TAG_WORK, MPI_COMM_WORLD);
    }
    while (done < N) {
      double answer[2];
      MPI_Status st;
      MPI_Recv(answer, 2, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
      results[(int)answer[0]] = answer[1];
      done++;
      int block = next < N ? next++ : STOP;
      MPI_Send(&block, 1, MPI_INT, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
    }
    double total = 0;
    for (int i = 0; i < N; i++) total += results[i];
    printf("total %.0f\n", total); /* 1296 on every interleaving */
  } else {
    for (;;) {
      int block;
      MPI_Recv(&block, 1, MPI_INT, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (block == STOP) break;
      double answer[2] = {block, row_times_vector(block)};
      MPI_Send(answer, 2, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
