/* mbhybrid-test: np=4 exit=0 interleavings=1 */
/* Issue 12, fault injection: a program every rank of which makes the same
 * forty MPI calls, so that tests/e2e/fault_injection.rs can kill any rank
 * at any of them (MBHYBRID_FAULT_INJECT=RANK:CALL:SIGNAL). Clean without
 * a fault. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < 20; i++) {
    int out = rank + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, right, i, &in, 1, MPI_INT, left, i, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  printf("rank %d sum %d\n", rank, sum);
  MPI_Finalize();
  return 0;
}
