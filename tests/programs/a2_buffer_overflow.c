/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 18: rank 1 posts receives larger than their buffers: 8 ints into
 * `int small[4]`, and 8 doubles into a block of 4 from malloc. Rank 0
 * sends only 4 of each, so nothing is overwritten and the run is fine;
 * the static check reports both receives before any run. The buffers that
 * fit (`&small[2]` with 2 ints, an `MPI_BYTE` view, `MPI_IN_PLACE`) must
 * stay silent. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank;
  int small[4] = {0, 0, 0, 0};
  double *block = malloc(4 * sizeof(double));
  double sum[4] = {1, 1, 1, 1};
  MPI_Request request;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    int data[4] = {1, 2, 3, 4};
    double more[4] = {0.5, 1.5, 2.5, 3.5};
    MPI_Send(data, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Send(more, 4, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
    MPI_Send(&data[2], 2, MPI_INT, 1, 2, MPI_COMM_WORLD);
    MPI_Send(more, 4 * sizeof(double), MPI_BYTE, 1, 3, MPI_COMM_WORLD);
  } else {
    MPI_Recv(small, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: buffer-overflow rank=1
    MPI_Irecv(block, 8, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &request); // expect: buffer-overflow rank=1
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Recv(&small[2], 2, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(block, 4 * sizeof(double), MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  free(block);
  MPI_Finalize();
  return 0;
}
