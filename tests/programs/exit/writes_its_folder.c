/* mbhybrid-test: np=3 exit=1 */
/* Issue 37: a program that reads an input file and writes an output file
 * by relative paths, as applications do. Each interleaving must run in a
 * folder of its own (the input still found, the output kept apart), and
 * the human report shows the end of the failing run's output. Rank 0
 * assumes rank 1's message comes first. */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, v = 0, size = 0;
  char line[64] = "";
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    FILE *in = fopen("input.txt", "r");
    FILE *up = fopen("../shared.txt", "r");
    if (!in || !up || !fgets(line, sizeof line, in))
      MPI_Abort(MPI_COMM_WORLD, 2);
    fclose(in);
    fclose(up);
    printf("read %s", line);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    FILE *out = fopen("out.txt", "w");
    fprintf(out, "first %d\n", st.MPI_SOURCE);
    fclose(out);
    printf("first message from rank %d\n", st.MPI_SOURCE);
    fflush(stdout);
    assert(st.MPI_SOURCE == 1);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
