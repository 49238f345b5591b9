/* mbhybrid-test: np=3 exit=1 */
/* Issue 38 §4: each form of nonblocking collective hands MPI the extent
 * its arguments give: MPI_Iscan's receive buffer, MPI_Iexscan's in place,
 * the whole `size * recvcount` send buffer of MPI_Ireduce_scatter_block,
 * this rank's count of MPI_Ireduce_scatter, the root's blocks of
 * MPI_Iscatterv where its displacements put them, the blocks of
 * MPI_Iallgatherv, the `size` blocks MPI_Ialltoall sends, MPI_Ialltoallw's
 * blocks at byte displacements. One access inside each (the expectations),
 * and one just outside, or on a rank whose call does not hand the buffer
 * over, that is not reported. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, x = 0, v, in[3], out[3], big[12] = {0};
  MPI_Request r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 3; i++) in[i] = rank + i;
  v = rank;

  MPI_Iscan(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  if (rank == 2) x += out[0]; // expect: buffer-reuse rank=2
  if (rank == 2) x += out[1]; /* past the one element */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  MPI_Iexscan(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  if (rank == 1) v = 3; // expect: buffer-reuse rank=1
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  MPI_Ireduce_scatter_block(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  if (rank == 0) in[2] = 9; // expect: buffer-reuse rank=0
  if (rank == 0) out[1] = 9; /* past this rank's block */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  int counts[3] = {1, 2, 0}, displs[3] = {0, 4, 8};
  int total = counts[0] + counts[1] + counts[2];
  MPI_Ireduce_scatter(big, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  if (rank == 1) x += out[1]; // expect: buffer-reuse rank=1
  if (rank == 0) x += out[1]; /* rank 0 gets one element */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  MPI_Iscatterv(big, counts, displs, MPI_INT, out, counts[rank], MPI_INT, 0, MPI_COMM_WORLD, &r);
  if (rank == 0) big[5] = 1; // expect: buffer-reuse rank=0
  if (rank == 0) big[6] = 1; /* past the last block */
  if (rank == 2) big[5] = 1; /* not the root */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  MPI_Iallgatherv(in, counts[rank], MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD, &r);
  if (rank == 2) x += big[4]; // expect: buffer-reuse rank=2
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  MPI_Ialltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &r);
  if (rank == 1) in[2] = 0; // expect: buffer-reuse rank=1
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  int ones[3] = {1, 1, 1}, bytes[3] = {0, 8, 16};
  MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
  MPI_Ialltoallw(in, ones, bytes, types, big, ones, bytes, types, MPI_COMM_WORLD, &r);
  if (rank == 0) x += big[4]; // expect: buffer-reuse rank=0
  if (rank == 0) x += big[5]; /* past the last block */
  MPI_Wait(&r, MPI_STATUS_IGNORE);

  printf("rank %d: %d %d %d %d\n", rank, x, v, out[0], big[0] + total);
  MPI_Finalize();
  return 0;
}
