/* mbhybrid-test: np=4 exit=0 interleavings=6 */
/* A polling loop: MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) until a message
 * is there, then a receive of exactly what was probed (size from
 * MPI_Get_count, source and tag from the status). Each rank sends once with
 * its own tag and length, so every successful probe can see any sender not
 * yet received: 3! orders. Only successful probes are events. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    int received = 0, total = 0;
    while (received < size - 1) {
      int flag = 0, count;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st); // probe
      if (!flag) continue;
      MPI_Get_count(&st, MPI_INT, &count);
      int *buf = malloc(sizeof(int) * count);
      MPI_Recv(buf, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < count; i++) total += buf[i];
      free(buf);
      received++;
    }
    printf("total %d\n", total);
  } else {
    int buf[8];
    for (int i = 0; i <= rank; i++) buf[i] = rank;
    MPI_Send(buf, rank + 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
