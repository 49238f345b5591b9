#include <mpi.h>

#include "halo.h"

int halo_checksum(int value) {
  int sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}
