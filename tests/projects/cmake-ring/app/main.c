#include <mpi.h>
#include <stdio.h>

#include "ring.h"

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int first = ring_first_arrival(rank, size);
  if (rank == 0) {
    printf("first arrival from rank %d\n", first);
  }
  MPI_Finalize();
  return 0;
}
