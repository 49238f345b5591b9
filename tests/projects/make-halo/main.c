#include <mpi.h>
#include <stdio.h>

#include "halo.h"

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int sum = halo_checksum(rank + 1);
  int got = halo_collect(rank);
  if (rank == 0) {
    printf("checksum %d, collected %d\n", sum, got);
  }
  MPI_Finalize();
  return 0;
}
