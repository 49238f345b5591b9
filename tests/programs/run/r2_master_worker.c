/* `mbhybrid run` (issue 14): a master hands out tasks to whichever worker
 * asks first (MPI_ANY_SOURCE) and prints which worker did each task. The
 * workers take random time per task, so under plain mpiexec the
 * assignment changes from run to run; under `mbhybrid run` it does not.
 * The workers wait for the master alone between tasks: the shape where
 * waiting for every rank's logical clock would deadlock (seed 002 §4.2.1,
 * Fig. 4) without the confirmed dependence. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TASKS 24

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    int next = 0, stopped = 0;
    char who[TASKS + 1] = {0};
    while (stopped < size - 1) {
      int result;
      MPI_Status st;
      MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      int task = next < TASKS ? next++ : -1;
      if (task >= 0)
        who[task] = (char)('0' + st.MPI_SOURCE);
      else
        stopped++;
      MPI_Send(&task, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
    }
    printf("%s\n", who);
  } else {
    srand((unsigned)time(NULL) ^ ((unsigned)getpid() << 8));
    int task = -1;
    for (;;) {
      MPI_Send(&task, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
      MPI_Recv(&task, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (task < 0)
        break;
      usleep(rand() % 4000);
    }
  }
  MPI_Finalize();
  return 0;
}
