/* mbhybrid-test: np=2 exit=3 */
/* Issue 12: a run whose traces cannot grow (the test puts the run
 * directory on a small tmpfs): 20000 barriers make more records than the
 * first mapping holds. The records that cannot be written are counted in
 * the trace header, the report says which rank lost how many, and the
 * verdict is never "complete" (exit 3). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 20000; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d done\n", rank);
  MPI_Finalize();
  return 0;
}
