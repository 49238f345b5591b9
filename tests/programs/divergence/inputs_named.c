/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37 (HPCG): the condition reads the problem size only; the timer
 * and the rank are other fields of the same struct. The branch is on the
 * program's input (argv[1]), not on the rank, and names neither
 * MPI_Wtime() nor the file read into another variable. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

struct params {
  int rank;
  double start;
  int n;
  int from_file;
};

int main(int argc, char **argv) {
  struct params p;
  int i, x = 1, y = 0;
  MPI_Init(&argc, &argv);
  p.start = MPI_Wtime();
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  p.n = argc > 1 ? atoi(argv[1]) : 2;
  p.from_file = 0;
  FILE *f = fopen("absent.dat", "r");
  if (f) {
    if (fscanf(f, "%d", &p.from_file) != 1)
      p.from_file = 0;
    fclose(f);
  }
  for (i = 0; i < p.n; i++)
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (p.rank == 0)
    printf("%d after %g s (%d)\n", y, MPI_Wtime() - p.start, p.from_file);
  MPI_Finalize();
  return 0;
}
