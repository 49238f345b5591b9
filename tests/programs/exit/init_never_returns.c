/* A rank stuck inside MPI's own start-up, as when its launcher dies while
 * it waits there (Open MPI's PMIx client then waits forever for an answer
 * from a dead server): this PMPI_Init never returns. Built with `-rdynamic`
 * so that the runtime's call of PMPI_Init reaches it. Given a path, it
 * creates that file first, to tell the stop test the moment to stop
 * verify. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int PMPI_Init(int *argc, char ***argv) {
  if (*argc > 1) {
    FILE *marker = fopen((*argv)[1], "w");
    if (marker)
      fclose(marker);
  }
  for (;;)
    pause();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
