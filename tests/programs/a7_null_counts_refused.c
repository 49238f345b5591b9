/* mbhybrid-test: np=3 exit=1 */
/* Issue 38: a NULL counts, displacements or datatypes array where the
 * rank's call reads it. MPICH reads such arrays unchecked and crashes in
 * the library; mbhybrid refuses the call before MPI sees it and reports an
 * invalid-argument at the call, naming the array, and the run ends as MPI
 * ends an erroneous call (the default handler stops the job).
 * `gatherv`: the root (rank 1) passes a NULL `recvcounts`; `iscatterv`:
 * the root (rank 0) a NULL `displs`; `ialltoallv`: in place, the NULL send
 * arrays are ignored but the NULL `rdispls` is not; `returned`: under
 * `MPI_ERRORS_RETURN` the program gets `MPI_ERR_ARG` back and goes on.
 * Arguments: FORM, the call (each on the line after its test below). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int rank, size, in[16], out[16], counts[16], displs[16];
  MPI_Datatype types[16];
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 16; i++) {
    in[i] = rank;
    counts[i] = 1;
    displs[i] = i;
    types[i] = MPI_INT;
  }
  const char *form = argc > 1 ? argv[1] : "ireduce_scatter";
  if (strcmp(form, "returned") == 0)
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (strcmp(form, "ireduce_scatter") == 0) {
    MPI_Ireduce_scatter(in, out, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  } else if (strcmp(form, "reduce_scatter") == 0) {
    MPI_Reduce_scatter(in, out, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (strcmp(form, "gatherv") == 0) {
    MPI_Gatherv(in, 1, MPI_INT, out, rank == 1 ? NULL : counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
  } else if (strcmp(form, "iscatterv") == 0) {
    MPI_Iscatterv(in, counts, rank == 0 ? NULL : displs, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  } else if (strcmp(form, "allgatherv") == 0) {
    MPI_Allgatherv(in, 1, MPI_INT, out, NULL, displs, MPI_INT, MPI_COMM_WORLD);
  } else if (strcmp(form, "ialltoallv") == 0) {
    MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, out, counts, NULL, MPI_INT, MPI_COMM_WORLD, &r);
  } else if (strcmp(form, "alltoallw") == 0) {
    MPI_Alltoallw(in, counts, displs, NULL, out, counts, displs, types, MPI_COMM_WORLD);
  } else if (strcmp(form, "returned") == 0) {
    int rc = MPI_Reduce_scatter(in, out, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD), class;
    MPI_Error_class(rc, &class);
    if (class == MPI_ERR_ARG)
      printf("rank %d: a NULL recvcounts gives MPI_ERR_ARG\n", rank);
  }
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  printf("rank %d: %s returned\n", rank, form);
  MPI_Finalize();
  return 0;
}
