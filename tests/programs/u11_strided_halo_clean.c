/* mbhybrid-test: np=2 exit=0 */
/* A halo exchange of columns with a vector datatype: the receive into
 * the ghost column is pending while the send of the interior column
 * starts. Their ranges overlap (each spans the rows), their bytes do not:
 * clean. Twin of u8_send_from_pending_recv.c for strided buffers. */
#include <mpi.h>
#include <stdio.h>
#define N 6

int main(int argc, char **argv) {
  int rank;
  double a[N][N + 2];
  MPI_Datatype column;
  MPI_Request requests[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N + 2; j++) a[i][j] = rank;
  MPI_Type_vector(N, 1, N + 2, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  int peer = 1 - rank;
  int ghost = rank == 0 ? N + 1 : 0, edge = rank == 0 ? N : 1;
  MPI_Irecv(&a[0][ghost], 1, column, peer, 0, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(&a[0][edge], 1, column, peer, 0, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  printf("rank %d ghost %g\n", rank, a[0][ghost]);
  MPI_Type_free(&column);
  MPI_Finalize();
  return 0;
}
