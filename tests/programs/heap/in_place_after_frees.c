/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 38 item 5: Open MPI's MPI_IN_PLACE is the pointer 1. The runtime's
 * heap table once looked it up like a block and matched a freed slot (its
 * key is also 1), so an in-place MPI_Allreduce was reported as overflowing
 * a freed block, in about one run in a few hundred. Freeing more small
 * blocks (of two sizes, so their addresses hash to every slot) than the
 * table has slots leaves a freed slot where that lookup starts in every
 * run; the in-place calls below are correct and must stay silent.
 * (MPICH's MPI_IN_PLACE is -1, which never matched.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 40000

int main(int argc, char **argv) {
  static double *small[BLOCKS];
  MPI_Init(&argc, &argv);
  for (int i = 0; i < BLOCKS; i++)
    small[i] = malloc(i % 2 ? 24 : 40);
  for (int i = 0; i < BLOCKS; i++)
    free(small[i]);
  double *d = malloc(40 * sizeof(double));
  for (int i = 0; i < 40; i++)
    d[i] = i;
  MPI_Allreduce(MPI_IN_PLACE, d, 40, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, d, 40, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  printf("sum %g\n", d[39]);
  free(d);
  MPI_Finalize();
  return 0;
}
