/* mbhybrid-test: np=3 exit=0 */
/* Issue 38: NULL arrays where MPI ignores them are correct, and silent:
 * the counts and displacements of `MPI_Gatherv` and `MPI_Scatterv` (and
 * their nonblocking forms) are "significant only at root" (MPI-4.0 §6.5,
 * §6.6), and `MPI_Alltoallv`/`MPI_Alltoallw` ignore their send arrays
 * with `MPI_IN_PLACE` (§6.8). Every rank checks what it received. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void expect(int ok, const char *what, int rank) {
  if (!ok) {
    fprintf(stderr, "rank %d: wrong %s\n", rank, what);
    abort();
  }
}

int main(int argc, char **argv) {
  int rank, size, in, got, all[16], counts[16], displs[16];
  int bytes[16], bdispls[16];
  MPI_Datatype types[16];
  MPI_Request r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < size; i++) {
    counts[i] = 1;
    displs[i] = i;
    bytes[i] = 1;
    bdispls[i] = i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  in = 10 + rank;
  int root = size - 1, me = rank == root;

  MPI_Gatherv(&in, 1, MPI_INT, all, me ? counts : NULL, me ? displs : NULL, MPI_INT, root, MPI_COMM_WORLD);
  for (int i = 0; me && i < size; i++) expect(all[i] == 10 + i, "Gatherv", rank);
  MPI_Igatherv(&in, 1, MPI_INT, all, me ? counts : NULL, me ? displs : NULL, MPI_INT, root, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; me && i < size; i++) expect(all[i] == 10 + i, "Igatherv", rank);

  for (int i = 0; i < size; i++) all[i] = 20 + i;
  MPI_Scatterv(all, me ? counts : NULL, me ? displs : NULL, MPI_INT, &got, 1, MPI_INT, root, MPI_COMM_WORLD);
  expect(got == 20 + rank, "Scatterv", rank);
  MPI_Iscatterv(all, me ? counts : NULL, me ? displs : NULL, MPI_INT, &got, 1, MPI_INT, root, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  expect(got == 20 + rank, "Iscatterv", rank);

  for (int i = 0; i < size; i++) all[i] = 100 * rank + i;
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++) expect(all[i] == 100 * i + rank, "Alltoallv", rank);
  MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < size; i++) expect(all[i] == 100 * rank + i, "Ialltoallv", rank);

  MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, all, bytes, bdispls, types, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++) expect(all[i] == 100 * i + rank, "Alltoallw", rank);
  MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, all, bytes, bdispls, types, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < size; i++) expect(all[i] == 100 * rank + i, "Ialltoallw", rank);

  /* On an intercommunicator of {0, 1} and {2, ...}: only rank 0, the
   * root (`MPI_ROOT`), reads the arrays; rank 1 (`MPI_PROC_NULL`) and the
   * other group (the root's rank) may pass NULL. */
  MPI_Comm half, inter;
  int low = rank < 2;
  MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? 2 : 0, 7, &inter);
  int iroot = rank == 0 ? MPI_ROOT : rank == 1 ? MPI_PROC_NULL : 0;
  int remote = size - 2;
  for (int i = 0; i < remote; i++) all[i] = -1;
  MPI_Gatherv(&in, 1, MPI_INT, all, rank == 0 ? counts : NULL, rank == 0 ? displs : NULL, MPI_INT, iroot, inter);
  for (int i = 0; rank == 0 && i < remote; i++) expect(all[i] == 12 + i, "intercommunicator Gatherv", rank);
  for (int i = 0; i < remote; i++) all[i] = 30 + i;
  got = -1;
  MPI_Scatterv(all, rank == 0 ? counts : NULL, rank == 0 ? displs : NULL, MPI_INT, &got, 1, MPI_INT, iroot, inter);
  expect(low || got == 30 + rank - 2, "intercommunicator Scatterv", rank);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);

  printf("rank %d: every call right\n", rank);
  MPI_Finalize();
  return 0;
}
