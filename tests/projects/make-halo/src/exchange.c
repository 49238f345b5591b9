/* The planted bug of the make project: rank 0 takes the first value with a
 * wildcard receive and assumes it came from rank 1, so when rank 2's value
 * is matched first, the receive from rank 2 waits for a second message that
 * is never sent. Only one of the two matches of the wildcard deadlocks. */
#include <mpi.h>

#include "halo.h"

enum { TAG = 7 };

int halo_collect(int rank) {
  int first = 0, second = 0;
  if (rank == 0) {
    MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&second, 1, MPI_INT, 2, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock here */
    return first + second;
  }
  if (rank <= 2) {
    MPI_Send(&rank, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
  }
  return rank;
}
