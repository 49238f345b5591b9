/* mbhybrid-test: np=2 exit=1 options=--timeout,60 */
/* Issue 18: rank 1 sends before MPI_Init (say, a setup routine called too
 * early). MPI aborts the process at that call, before any trace exists;
 * mbhybrid reports the call at its line instead of "no process reached
 * MPI_Init". MPI_Initialized, allowed before MPI_Init, is not reported. */
#include <mpi.h>
#include <stdlib.h>

static void announce(int value) {
  MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); // expect: before-init rank=1
}

int main(int argc, char **argv) {
  int started = 0;
  MPI_Initialized(&started);
  /* The launcher's rank variable: MPICH's Hydra, then Open MPI's. */
  const char *rank = getenv("PMI_RANK");
  if (!rank)
    rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!started && rank && atoi(rank) == 1)
    announce(1);
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
