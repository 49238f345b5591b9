/* mbhybrid-test: np=3 exit=0 interleavings=2 */
/* S9 with matched probes: a wildcard MPI_Mprobe (then MPI_Improbe) takes
 * one sender's message, MPI_Mrecv (then MPI_Imrecv) receives exactly that
 * message; MPI_Get_count on the probe's status counts the user's data. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Status st;
    MPI_Message msg;
    MPI_Request req;
    int count = -1, v = 0, flag = 0;
    MPI_Mprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &msg, &st); // the matched probe
    MPI_Get_count(&st, MPI_INT, &count);
    assert(count == 1);
    printf("first from %d\n", st.MPI_SOURCE);
    MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
    assert(v == st.MPI_SOURCE * 10);
    while (!flag)
      MPI_Improbe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    assert(count == 1);
    MPI_Imrecv(&v, 1, MPI_INT, &msg, &req);
    MPI_Wait(&req, &st);
    assert(v == st.MPI_SOURCE * 10);
  } else {
    int v = rank * 10;
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
