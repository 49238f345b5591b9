/* mbhybrid-test: np=3 exit=1 */
/* Issue 16: MPI_Alltoallv whose ranks disagree on one pair's counts: rank
 * 0 sends 2 ints to rank 1, which expects 3 from it. MPI neither hangs nor
 * fails (rank 1 just gets fewer ints than it asked for). The signature
 * check compares, pair by pair, what each rank sends a peer with what
 * that peer expects from it, and reports the call on every rank.
 * Before it, correct exchanges with uneven counts must stay clean: an
 * Alltoallv, an Ialltoallv whose ranks receive in a datatype of two ints
 * what was sent as ints (equal signatures, different counts), an
 * Alltoallv in place and an Alltoallw. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, sc[3], sd[3], rc[3], rd[3], sb[64], rb[64], sum = 0;
  MPI_Datatype pair;
  MPI_Datatype st[3], rt[3];
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 64; i++) sb[i] = rank * 100 + i;
  /* Rank i sends i + j + 1 ints to rank j. */
  for (int j = 0, s = 0, r = 0; j < size; j++) {
    sc[j] = rank + j + 1; sd[j] = s; s += sc[j];
    rc[j] = j + rank + 1; rd[j] = r; r += rc[j];
  }
  MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
  sum += rb[rd[size - 1]];
  /* Twice as many ints, received as pairs of ints. */
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  for (int j = 0, s = 0; j < size; j++) { sc[j] = 2 * (rank + j + 1); sd[j] = s; s += sc[j]; }
  MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, pair, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  sum += rb[2 * rd[size - 1]];
  MPI_Type_free(&pair);
  /* In place: each block received replaces the one sent. */
  for (int j = 0, r = 0; j < size; j++) { rc[j] = j + rank + 1; rd[j] = r; r += rc[j]; }
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
  sum += rb[0];
  /* Alltoallw: displacements in bytes, a datatype per peer. */
  for (int j = 0; j < size; j++) {
    sc[j] = rank + j + 1; sd[j] = 8 * (int)sizeof(int) * j; st[j] = MPI_INT;
    rc[j] = j + rank + 1; rd[j] = 8 * (int)sizeof(int) * j; rt[j] = MPI_INT;
  }
  MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD);
  sum += rb[8 * (size - 1)];
  printf("rank %d: %d\n", rank, sum);
  fflush(stdout);
  /* The mismatch: 2 ints from every rank to every rank, but rank 1
   * expects 3 from rank 0. */
  for (int j = 0; j < size; j++) { sc[j] = 2; sd[j] = 2 * j; rc[j] = 2; rd[j] = 4 * j; }
  if (rank == 1) rc[0] = 3;
  MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD); // expect: collective-mismatch rank=0 rank=1 rank=2
  printf("rank %d: %d %d %d\n", rank, rb[0], rb[1], rb[2]);
  MPI_Finalize();
  return 0;
}
