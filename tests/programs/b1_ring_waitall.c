/* mbhybrid-test: np=3 exit=1 options=--buffering,zero */
/* Issue 11: a ring exchange whose Isends are completed by MPI_Waitall
 * before the receives are posted. Without buffering no send can complete
 * (every rank waits for its right neighbour to receive): deadlock. With
 * MPI's eager buffering the run completes, and only the buffering
 * analysis (seed 003 §3), which must model the Waitall, sees it. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, size, out[2], in[2];
  MPI_Request reqs[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  out[0] = rank;
  out[1] = -rank;
  MPI_Isend(&out[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(&out[1], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); // expect: deadlock rank=0 rank=1 rank=2
  MPI_Recv(&in[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&in[1], 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return in[0] == left && in[1] == -left ? 0 : 3;
}
