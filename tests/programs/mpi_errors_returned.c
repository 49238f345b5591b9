/* mbhybrid-test: np=2 exit=1 */
/* MPI errors the program handles itself (MPI_ERRORS_RETURN): a send with a
 * negative count is an invalid argument (MPI_ERR_COUNT), a receive into a
 * buffer too small for the message an MPI error (MPI_ERR_TRUNCATE). Both
 * are reported at their lines, and the program sees the same error classes
 * as without mbhybrid and finishes. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, rc, class, buf[4] = {1, 2, 3, 4};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 0) {
    rc = MPI_Send(buf, -1, MPI_INT, 1, 0, MPI_COMM_WORLD); // expect: invalid-argument rank=0
    MPI_Error_class(rc, &class);
    printf("rank 0: a negative count gives %s\n", class == MPI_ERR_COUNT ? "MPI_ERR_COUNT" : "another class");
    MPI_Send(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else {
    rc = MPI_Recv(buf, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: mpi-error rank=1
    MPI_Error_class(rc, &class);
    printf("rank 1: a short buffer gives %s\n", class == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another class");
  }
  MPI_Finalize();
  return 0;
}
