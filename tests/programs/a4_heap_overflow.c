/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 18, the runtime half of the buffer check: a receive whose count
 * reaches past the end of its malloc'ed block is a finding even though the
 * message that arrives is short (100 ints into room for 1000, with a count
 * of 2000). The static analysis cannot know the block's size (it comes
 * from the command line's default); the runtime learns it from the notes
 * `mbhybrid build` inserts after each allocation. The other calls use
 * their blocks correctly: a calloc'ed block, a realloc'ed one, a block
 * freed and made again with another size, an in-place Allreduce and a
 * Bcast that fill their blocks exactly. A derived datatype is checked
 * by its extent: 11 pairs of doubles do not fit in 20 doubles. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, n = argc > 1 ? atoi(argv[1]) : 1000;
  MPI_Datatype pair;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  int *buf = malloc(n * sizeof(int));
  double *d = calloc(10, sizeof(double));
  double *grown = malloc(4 * sizeof(double));
  grown = realloc(grown, 20 * sizeof(double));
  free(d);
  d = malloc(40 * sizeof(double));
  for (int i = 0; i < n; i++)
    buf[i] = i;
  if (rank == 0) {
    MPI_Send(buf, 100, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Send(d, 40, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
    MPI_Send(grown, 10, pair, 1, 2, MPI_COMM_WORLD);
  } else {
    MPI_Recv(buf, 2 * n, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: buffer-overflow rank=1
    MPI_Recv(d, 40, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(grown, 11, pair, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: buffer-overflow rank=1
    printf("got %d\n", buf[99]);
  }
  MPI_Allreduce(MPI_IN_PLACE, d, 40, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Bcast(grown, 20, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  free(buf);
  free(d);
  free(grown);
  MPI_Type_free(&pair);
  MPI_Finalize();
  return 0;
}
