/* mbhybrid-test: np=3 exit=0 interleavings=2 */
/* SCENARIOS.md S9: a wildcard probe decides which sender to receive from;
 * MPI_Get_count on the probe's status must count only the user's data. */
#include <assert.h>
#include <mpi.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (int i = 0; i < 2; i++) {
      MPI_Status st;
      int count = -1, v = 0;
      MPI_Probe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      assert(count == 1);
      MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      assert(v == st.MPI_SOURCE * 10);
    }
  } else {
    int v = rank * 10;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
