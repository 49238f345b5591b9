/* mbhybrid-test: np=3 exit=1 */
/* Issue 38 §4: a rooted collective on which one rank passes another
 * communicator than the others (`MPI_Gather(..., rank == odd ? dup :
 * MPI_COMM_WORLD)`) hangs under MPI; it is confirmed on the wait-for graph
 * or by the collective signature check, never left to the timeout.
 * Arguments: FORM ODD ROOT, FORM one of gather, igather, ireduce,
 * igather-ireduce; ODD the rank on the duplicate; ROOT the root. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  int rank, size, in, all[16], sum = 0;
  MPI_Comm dup, comm;
  MPI_Request r[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const char *form = argc > 1 ? argv[1] : "gather";
  int odd = argc > 2 ? atoi(argv[2]) : 1;
  int root = argc > 3 ? atoi(argv[3]) : 0;
  comm = rank == odd ? dup : MPI_COMM_WORLD;
  in = rank;
  if (strcmp(form, "gather") == 0) {
    MPI_Gather(&in, 1, MPI_INT, all, 1, MPI_INT, root, comm);
  } else if (strcmp(form, "igather") == 0) {
    MPI_Igather(&in, 1, MPI_INT, all, 1, MPI_INT, root, comm, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  } else if (strcmp(form, "ireduce") == 0) {
    MPI_Ireduce(&in, &sum, 1, MPI_INT, MPI_SUM, root, comm, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  } else {
    MPI_Igather(&in, 1, MPI_INT, all, 1, MPI_INT, root, comm, &r[0]);
    MPI_Ireduce(&in, &sum, 1, MPI_INT, MPI_SUM, root, comm, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  printf("rank %d: %d\n", rank, sum);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
