/* mbhybrid-test: np=3 exit=1 options=--buffering,zero */
/* Issue 11: the ring of b1_ring_waitall.c, its Isends completed one at a
 * time by a MPI_Waitany loop before the receives are posted. Without
 * buffering no Waitany can return: deadlock. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, size, out[2], in[2], which;
  MPI_Request reqs[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  out[0] = rank;
  out[1] = -rank;
  MPI_Isend(&out[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(&out[1], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[1]);
  for (int k = 0; k < 2; k++)
    MPI_Waitany(2, reqs, &which, MPI_STATUS_IGNORE); // expect: deadlock rank=0 rank=1 rank=2
  MPI_Recv(&in[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&in[1], 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return in[0] == left && in[1] == -left ? 0 : 3;
}
