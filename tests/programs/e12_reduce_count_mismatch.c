/* mbhybrid-test: np=2 exit=1 */
/* The ranks reduce different counts: a collective mismatch (MPI requires
 * equal counts and datatypes). The root would receive more data than it
 * expects; the runtime's signature check compares the datatype
 * signatures and reports both calls instead. */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, in[2] = {1, 2}, out[2] = {0, 0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // expect: collective-mismatch rank=0
  } else {
    MPI_Reduce(in, out, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD); // expect: collective-mismatch rank=1
  }
  MPI_Finalize();
  return 0;
}
