/* mbhybrid-test: np=3 exit=0 */
/* Issue 38 §4: no buffer-reuse. The buffers of nonblocking collectives are
 * touched only after their MPI_Wait (or a successful MPI_Test), or are not
 * the rank's part in the call: MPI_Iscatter's send buffer at a non-root,
 * MPI_Ireduce's receive buffer at a non-root; send buffers are read while
 * pending; another array is written. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, flag = 0, sum = 0;
  int block[3] = {0, 0, 0}, piece = 0, total = 0, other[3] = {0, 0, 0};
  MPI_Request r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 3; i++) block[i] = rank * 10 + i;

  MPI_Iscatter(block, 1, MPI_INT, &piece, 1, MPI_INT, 1, MPI_COMM_WORLD, &r);
  if (rank != 1) block[0] = -1; /* not the root: not handed to MPI */
  for (int i = 0; i < 3; i++) other[i] = i; /* another array */
  while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  piece += 1; /* complete */

  MPI_Ireduce(&piece, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r);
  sum += piece; /* a send buffer read */
  if (rank != 0) total = 7; /* not the root: not handed to MPI */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, block, 1, MPI_INT, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  block[rank] += 1; /* complete */

  printf("rank %d: %d %d %d %d\n", rank, piece, total, sum, block[rank] + other[2]);
  MPI_Finalize();
  return 0;
}
