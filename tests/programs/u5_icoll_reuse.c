/* mbhybrid-test: np=3 exit=1 */
/* Issue 38 §4: the buffers of nonblocking collectives are watched as
 * point-to-point buffers are. A pending send buffer written, a pending
 * receive buffer read or written before the MPI_Wait: buffer-reuse at the
 * access, with the collective's line. What a rank's call does not hand MPI
 * (a non-root's receive buffer of MPI_Igather, memory past the last block
 * of MPI_Igatherv) is not reported, nor is a send buffer read. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, in, out = 0, b = 0, seen = 0;
  MPI_Request r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  in = rank + 1;

  MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  if (rank == 0) in = 5; // expect: buffer-reuse rank=0
  if (rank == 1) printf("early sum %d\n", out); // expect: buffer-reuse rank=1
  seen += in; /* reading a send buffer is allowed */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  int *all = calloc(12, sizeof(int));
  MPI_Igather(&in, 1, MPI_INT, all, 1, MPI_INT, 2, MPI_COMM_WORLD, &r);
  if (rank == 2) all[2] = -1; // expect: buffer-reuse rank=2
  if (rank == 0) all[1] = 1; /* not the root: its receive buffer is its own */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  if (rank == 0) b = 42;
  MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  if (rank == 0) seen += b; /* the root's buffer is only read */
  if (rank == 1) seen += b; // expect: buffer-reuse rank=1
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  int counts[3] = {1, 1, 1}, displs[3] = {0, 4, 8};
  MPI_Igatherv(&in, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r);
  if (rank == 0) all[8] = -2; // expect: buffer-reuse rank=0
  if (rank == 0) all[10] = -3; /* past the last block */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  printf("rank %d: %d %d %d %d\n", rank, out, all[0], b, seen);
  free(all);
  MPI_Finalize();
  return 0;
}
