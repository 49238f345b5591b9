/* mbhybrid-test: np=2 exit=1 */
/* Issue 19, seed 000 §2.3.6.3 (Fig 2.9), SCENARIOS.md E9, with derived
 * datatypes and a matched receive: rank 0 sends every other element of
 * `grid` (an MPI_Type_vector) and writes one of them before MPI_Wait;
 * rank 1 takes the message with MPI_Mprobe and MPI_Imrecv into a
 * contiguous type and reads it before MPI_Wait. Both are found at the
 * access's line. */
#include <mpi.h>
#include <stdio.h>

#define N 64

int main(int argc, char **argv) {
  int rank;
  double grid[2 * N], column[N];
  MPI_Datatype every_other, block;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_contiguous(N, MPI_DOUBLE, &block);
  MPI_Type_commit(&block);
  if (rank == 0) {
    for (int i = 0; i < 2 * N; i++) grid[i] = i;
    MPI_Isend(grid, 1, every_other, 1, 7, MPI_COMM_WORLD, &request);
    grid[2 * 10] = -1.0; // expect: buffer-reuse rank=0
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Message message;
    MPI_Mprobe(0, 7, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE);
    MPI_Imrecv(column, 1, block, &message, &request);
    double early = column[N - 1]; // expect: buffer-reuse rank=1
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    printf("column[%d] = %g (read %g early)\n", N - 1, column[N - 1], early);
  }
  MPI_Type_free(&every_other);
  MPI_Type_free(&block);
  MPI_Finalize();
  return 0;
}
