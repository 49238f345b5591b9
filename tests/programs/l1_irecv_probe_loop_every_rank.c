/* mbhybrid-test: np=4 exit=3 interleavings=1 options=--loop-abstraction,auto */
/* Issue 13's shape: on every rank, a loop whose rounds post two wildcard
 * MPI_Irecvs and take two messages through wildcard MPI_Probes; both
 * neighbours send to each, so every receive and probe has two possible
 * senders. The outcomes are only summed: `build` marks the loop for
 * abstraction, and --loop-abstraction auto runs one interleaving (exit 3:
 * the report says the abstracted choice points were not explored). */
#include <mpi.h>
#include <stdio.h>

#define ROUNDS 6

int main(int argc, char **argv) {
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int r = 0; r < ROUNDS; r++) {
    int out = rank * 100 + r, in = 0, in2 = 0, probed = 0, probed2 = 0;
    MPI_Request req[6];
    MPI_Status st;
    MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&in2, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&out, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&out, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req[3]);
    MPI_Isend(&out, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &req[4]);
    MPI_Isend(&out, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &req[5]);
    MPI_Probe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
    MPI_Recv(&probed, 1, MPI_INT, st.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Probe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
    MPI_Recv(&probed2, 1, MPI_INT, st.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(6, req, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    sum += in + in2 + probed + probed2;
  }
  printf("rank %d sum %d\n", rank, sum);
  MPI_Finalize();
  return 0;
}
