/* `mbhybrid run` (issue 14): what MPI_Testany, MPI_Test and MPI_Iprobe
 * report depends on when messages arrive. Rank 0 posts one MPI_Irecv per
 * worker and polls them with MPI_Testany, counting the polls, then polls
 * MPI_Iprobe(MPI_ANY_SOURCE) for a second message of each worker, and a
 * last MPI_Irecv with MPI_Test. It prints the order the requests completed
 * in, the senders it probed, and every poll count. The workers sleep at
 * random before each send. Under `mbhybrid run` (seed 002 §3.3: a test
 * reports a request complete at its deterministic transmission point)
 * every run prints the same line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    int n = size - 1, v[16], done = 0, polls = 0, index, flag;
    MPI_Request reqs[16];
    for (int w = 1; w <= n; w++)
      MPI_Irecv(&v[w - 1], 1, MPI_INT, w, 0, MPI_COMM_WORLD, &reqs[w - 1]);
    while (done < n) {
      MPI_Testany(n, reqs, &index, &flag, MPI_STATUS_IGNORE);
      polls++;
      if (flag) {
        printf("%d(%d) ", index + 1, polls);
        done++;
      }
    }
    for (int k = 0; k < n; k++) {
      MPI_Status st;
      polls = 0;
      do {
        MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st);
        polls++;
      } while (!flag);
      MPI_Recv(&v[0], 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("p%d(%d) ", st.MPI_SOURCE, polls);
    }
    MPI_Request last;
    MPI_Irecv(&v[0], 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &last);
    polls = 0;
    do {
      MPI_Test(&last, &flag, MPI_STATUS_IGNORE);
      polls++;
    } while (!flag);
    printf("t(%d)\n", polls);
  } else {
    srand((unsigned)time(NULL) ^ ((unsigned)getpid() << 8));
    for (int tag = 0; tag < 2; tag++) {
      usleep(rand() % 20000);
      MPI_Send(&rank, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
    }
    if (rank == 1) {
      usleep(rand() % 20000);
      MPI_Send(&rank, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
