/* mbhybrid-test: np=3 exit=0 options=--buffering,zero */
/* Issue 11: the correct ring. The receives are posted (MPI_Irecv) before
 * the sends, and one MPI_Waitall completes all four requests: no run
 * needs buffering, with or without it. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, size, out[2], in[2];
  MPI_Request reqs[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  out[0] = rank;
  out[1] = -rank;
  MPI_Irecv(&in[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, &reqs[0]);
  MPI_Irecv(&in[1], 1, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[1]);
  MPI_Isend(&out[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[2]);
  MPI_Isend(&out[1], 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[3]);
  MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
  MPI_Finalize();
  return in[0] == left && in[1] == -left ? 0 : 3;
}
