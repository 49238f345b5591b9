/* mbhybrid-test: np=3 exit=0 */
/* Issue 38 §4: a nonblocking collective never waited or tested is a
 * request-leak at its call on every rank, as a point-to-point request is
 * (MPI-4.1 §3.7.3: every request must be completed or freed); every form
 * below leaks (`leaks` in the markers), the one waited does not. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, a[16] = {0}, b[16] = {0}, e[3], f[3], g[3], h[3], k[3], all[3];
  int ones[3] = {1, 1, 1}, displs[3] = {0, 1, 2}, bytes[3] = {0, 4, 8};
  MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
  MPI_Request r[17], waited;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Ibarrier(w, &r[0]); /* leaks */
  MPI_Ibcast(a, 1, MPI_INT, 0, w, &r[1]); // expect: request-leak rank=0
  MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, 2, w, &r[2]); // expect: request-leak rank=1
  MPI_Iallreduce(a + 1, b + 1, 1, MPI_INT, MPI_SUM, w, &r[3]); /* leaks */
  MPI_Iscan(a + 2, b + 2, 1, MPI_INT, MPI_SUM, w, &r[4]); /* leaks */
  MPI_Iexscan(a + 3, b + 3, 1, MPI_INT, MPI_SUM, w, &r[5]); /* leaks */
  MPI_Ireduce_scatter_block(a, b + 4, 1, MPI_INT, MPI_SUM, w, &r[6]); /* leaks */
  MPI_Ireduce_scatter(a, b + 5, ones, MPI_INT, MPI_SUM, w, &r[7]); /* leaks */
  MPI_Igather(a, 1, MPI_INT, b + 6, 1, MPI_INT, 0, w, &r[8]); /* leaks */
  MPI_Iscatter(a, 1, MPI_INT, b + 9, 1, MPI_INT, 0, w, &r[9]); /* leaks */
  MPI_Iallgather(a, 1, MPI_INT, b + 10, 1, MPI_INT, w, &r[10]); /* leaks */
  MPI_Ialltoall(a, 1, MPI_INT, b + 13, 1, MPI_INT, w, &r[11]); /* leaks */
  MPI_Igatherv(a, 1, MPI_INT, e, ones, displs, MPI_INT, 0, w, &r[12]); /* leaks */
  MPI_Iscatterv(a, ones, displs, MPI_INT, f, 1, MPI_INT, 0, w, &r[13]); /* leaks */
  MPI_Iallgatherv(a, 1, MPI_INT, g, ones, displs, MPI_INT, w, &r[14]); /* leaks */
  MPI_Ialltoallv(a, ones, displs, MPI_INT, h, ones, displs, MPI_INT, w, &r[15]); /* leaks */
  MPI_Ialltoallw(a, ones, bytes, types, k, ones, bytes, types, w, &r[16]); /* leaks */
  MPI_Iallgather(&rank, 1, MPI_INT, all, 1, MPI_INT, w, &waited);
  MPI_Wait(&waited, MPI_STATUS_IGNORE);
  MPI_Barrier(w);
  printf("rank %d\n", rank);
  MPI_Finalize();
  return 0;
}
