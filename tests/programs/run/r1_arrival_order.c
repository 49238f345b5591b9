/* `mbhybrid run` (issue 14): rank 0 prints the senders in the order its
 * wildcard receives took them. The other ranks send after random delays
 * (seeded by time and pid), so under plain mpiexec the order changes from
 * run to run; under `mbhybrid run` it is the same on every run. Rounds
 * alternate between MPI_Recv and MPI_Probe + MPI_Recv from the probed
 * source, and between MPI_COMM_WORLD and a duplicate of it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 4

int main(int argc, char **argv) {
  int rank, size;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0) {
    for (int i = 0; i < ROUNDS * (size - 1); i++) {
      MPI_Comm comm = (i / (size - 1)) % 2 ? dup : MPI_COMM_WORLD;
      MPI_Status st;
      int v;
      if (i % 2) {
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
      } else {
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
      }
      printf("%d", st.MPI_SOURCE);
    }
    printf("\n");
  } else {
    srand((unsigned)time(NULL) ^ ((unsigned)getpid() << 8));
    for (int round = 0; round < ROUNDS; round++) {
      MPI_Comm comm = round % 2 ? dup : MPI_COMM_WORLD;
      usleep(rand() % 20000);
      MPI_Send(&round, 1, MPI_INT, 0, round, comm);
    }
  }
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
