/* A halo exchange completed by MPI_Waitall (2 Irecvs, 2 Isends), then a
 * barrier, then wildcard receives: the barrier orders nothing they can
 * match, so it is irrelevant. Fib once read every receive a Waitall
 * completed as its first request and judged such barriers "unknown". */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, left, right, a = 0, b = 0, x;
  MPI_Request r[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  left = (rank + size - 1) % size;
  right = (rank + 1) % size;
  for (int step = 0; step < 2; step++) {
    MPI_Irecv(&a, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&b, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&rank, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(&rank, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD); /* barrier */
  }
  if (rank == 0) {
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank < 3) {
    MPI_Send(&rank, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
