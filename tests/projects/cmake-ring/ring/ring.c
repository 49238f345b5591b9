/* The planted bug of the CMake project: rank 0 asserts that the first
 * message to arrive is not the last rank's, which holds only for some
 * matches of its wildcard receive. */
#include <assert.h>
#include <mpi.h>

#include "ring.h"

int ring_first_arrival(int rank, int size) {
  int first = -1;
  if (rank == 0) {
    for (int i = 1; i < size; i++) {
      int from = -1;
      MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (i == 1) {
        first = from;
      }
    }
    assert(first != size - 1); /* fails when the last rank is heard first */
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  return first;
}
