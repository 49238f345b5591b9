/* `mbhybrid run` (issue 14): a ring whose ranks post two MPI_Irecv from
 * MPI_ANY_SOURCE before their sends (so no sender can be chosen when they
 * are posted: deterministic mode defers them), then MPI_Waitany and
 * MPI_Waitall. Each rank prints which request MPI_Waitany returned and
 * which neighbour each receive took, every round; the sends are delayed
 * at random. Under `mbhybrid run` every run prints the same lines. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  srand((unsigned)time(NULL) ^ ((unsigned)getpid() << 8));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int in[2], out = rank, index;
  MPI_Request reqs[4];
  MPI_Status st[4];
  char line[64] = {0};
  for (int round = 0; round < 3; round++) {
    MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &reqs[1]);
    usleep(rand() % 5000);
    MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[2]);
    usleep(rand() % 5000);
    MPI_Isend(&out, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &reqs[3]);
    MPI_Waitany(4, reqs, &index, &st[0]);
    int first = index < 2 ? st[0].MPI_SOURCE : 9; /* a send's status says nothing */
    MPI_Waitall(4, reqs, st);
    sprintf(line + strlen(line), "%d:%d%d%d ", index, first, st[0].MPI_SOURCE, st[1].MPI_SOURCE);
  }
  printf("rank %d: %s\n", rank, line);
  MPI_Finalize();
  return 0;
}
