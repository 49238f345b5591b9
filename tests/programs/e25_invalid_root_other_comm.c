/* mbhybrid-test: np=3 exit=1 */
/* Issue 38: ranks call a rooted collective on different communicators
 * (rank ODD on a duplicate of world) and rank BAD passes a root that is
 * no rank of its communicator (root = size). The invalid root is an
 * argument error MPI decides at the call, before any matching: it is
 * reported at the call, never lost behind the deadlock of the others.
 * Arguments: FORM ODD BAD, FORM one of gather, igather, bcast, ireduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int rank, size, in, all[16], sum = 0;
  MPI_Comm dup, comm;
  MPI_Request r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const char *form = argc > 1 ? argv[1] : "gather";
  int odd = argc > 2 ? atoi(argv[2]) : 1;
  int bad = argc > 3 ? atoi(argv[3]) : 2;
  comm = rank == odd ? dup : MPI_COMM_WORLD;
  int root = rank == bad ? size : 0;
  in = rank;
  if (strcmp(form, "gather") == 0) {
    MPI_Gather(&in, 1, MPI_INT, all, 1, MPI_INT, root, comm);
  } else if (strcmp(form, "igather") == 0) {
    MPI_Igather(&in, 1, MPI_INT, all, 1, MPI_INT, root, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (strcmp(form, "bcast") == 0) {
    MPI_Bcast(&in, 1, MPI_INT, root, comm);
  } else {
    MPI_Ireduce(&in, &sum, 1, MPI_INT, MPI_SUM, root, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  printf("rank %d: %d\n", rank, sum);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
