/* mbhybrid-test: np=3 exit=1 */
/* Issue 16: an MPI_Gatherv whose root expects 3 ints from rank 1, which
 * sends 2. MPI neither hangs nor fails (the root just gets fewer ints than
 * it made room for). The signature check compares each block the root
 * gathers with what the root expects from its sender, and reports the
 * call on every rank. Before it, correct Gatherv, Scatterv and Allgatherv
 * calls with uneven counts must stay clean: blocking and nonblocking, in
 * place, and received in a datatype of two ints what was sent as ints. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, counts[3], displs[3], sb[64], rb[64], sum = 0;
  MPI_Datatype pair;
  MPI_Request request;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 64; i++) sb[i] = rank * 100 + i;
  /* Rank j contributes j + 1 ints. */
  for (int j = 0, d = 0; j < size; j++) { counts[j] = j + 1; displs[j] = d; d += counts[j]; }
  MPI_Gatherv(sb, rank + 1, MPI_INT, rb, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) sum += rb[displs[size - 1]];
  MPI_Scatterv(sb, counts, displs, MPI_INT, rb, rank + 1, MPI_INT, 1, MPI_COMM_WORLD);
  sum += rb[0];
  MPI_Allgatherv(sb, rank + 1, MPI_INT, rb, counts, displs, MPI_INT, MPI_COMM_WORLD);
  sum += rb[displs[size - 1]];
  /* In place: the root's own block (Gatherv, Scatterv), every rank's
   * (Allgatherv) is already where it goes. */
  if (rank == 2)
    MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, rb, counts, displs, MPI_INT, 2, MPI_COMM_WORLD);
  else
    MPI_Gatherv(sb, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 2, MPI_COMM_WORLD);
  if (rank == 0)
    MPI_Scatterv(sb, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, 0, MPI_COMM_WORLD);
  else
    MPI_Scatterv(NULL, NULL, NULL, MPI_INT, rb, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INT, rb, counts, displs, MPI_INT, MPI_COMM_WORLD);
  sum += rb[0];
  /* Twice as many ints, gathered as pairs of ints: equal signatures. */
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Igatherv(sb, 2 * (rank + 1), MPI_INT, rb, counts, displs, pair, 1, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Iallgatherv(sb, 2 * (rank + 1), MPI_INT, rb, counts, displs, pair, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  sum += rb[0];
  MPI_Type_free(&pair);
  printf("rank %d: %d\n", rank, sum);
  fflush(stdout);
  /* The mismatch: every rank sends 2 ints, but the root expects 3 from
   * rank 1. */
  for (int j = 0; j < size; j++) { counts[j] = 2; displs[j] = 4 * j; }
  counts[1] = 3;
  MPI_Gatherv(sb, 2, MPI_INT, rb, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); // expect: collective-mismatch rank=0 rank=1 rank=2
  printf("rank %d: %d %d\n", rank, rb[0], rb[4]);
  MPI_Finalize();
  return 0;
}
