/* The crooked barrier (seed 000 Fig 1.1; SCENARIOS.md S1).
 *
 *   P0: Isend(to 1, 22); Barrier; Wait
 *   P1: Irecv(*, x); Barrier; Recv(*, y); Wait; assert(x != 33)
 *   P2: Barrier; Isend(to 1, 33); Wait
 *
 * P2's message is sent after the barrier, yet it can still match P1's
 * wildcard Irecv posted before it: the barrier does not order them. Plain
 * mpiexec runs almost always match P0's 22 first, so the assertion never
 * fails in testing; it fails when the Irecv takes P2's 33.
 *
 *   mbhybrid build -o crooked examples/crooked_barrier.c
 *   mbhybrid verify -n 3 ./crooked
 */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0)
      fprintf(stderr, "crooked_barrier: run with 3 processes (-n 3)\n");
    MPI_Finalize();
    return 2;
  }

  if (rank == 0) {
    int value = 22;
    MPI_Request req;
    MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    int x = 0, y = 0;
    MPI_Request req;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    printf("rank 1 received x=%d y=%d\n", x, y);
    assert(x != 33);
  } else {
    int value = 33;
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }

  MPI_Finalize();
  return 0;
}
