/* Transparency (issue 16): buffered sends from a buffer sized exactly as
 * the standard says (MPI_Pack_size + MPI_BSEND_OVERHEAD per message), all
 * buffered at once, then detached and attached again. MPI runs it cleanly;
 * so must mbhybrid, with the same output, and MPI_Buffer_detach must hand
 * back the program's own buffer and size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define SMALL 1
#define MEDIUM 100
#define LARGE 2000 /* 16000 bytes: past the runtime's packed fast path */

static int bsend_size(int count, MPI_Datatype type) {
  int bytes;
  MPI_Pack_size(count, type, MPI_COMM_WORLD, &bytes);
  return bytes + MPI_BSEND_OVERHEAD;
}

/* One message in a buffer of exactly its size: the tightest case. */
static void single_message(int rank) {
  int value = 5, size = bsend_size(1, MPI_INT), detached_size;
  char *buffer = malloc(size), *detached;
  MPI_Buffer_attach(buffer, size);
  if (rank == 0)
    MPI_Bsend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  else if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("single value=%d\n", value);
  }
  MPI_Buffer_detach(&detached, &detached_size);
  printf("single rank %d detach same-buffer=%d same-size=%d\n", rank,
         detached == buffer, detached_size == size);
  free(buffer);
}

/* Four messages buffered at once, of sizes on both sides of the runtime's
 * packed fast path. */
static void round_trip(int rank, int round) {
  int small = 7 + round;
  double medium[MEDIUM], large[LARGE];
  int size = bsend_size(SMALL, MPI_INT) + bsend_size(MEDIUM, MPI_DOUBLE) +
             bsend_size(LARGE, MPI_DOUBLE) + bsend_size(0, MPI_INT);
  char *buffer = malloc(size);
  MPI_Buffer_attach(buffer, size);
  if (rank == 0) {
    MPI_Request request;
    for (int i = 0; i < MEDIUM; i++)
      medium[i] = i * 0.5 + round;
    for (int i = 0; i < LARGE; i++)
      large[i] = i * 0.25 - round;
    /* Every message is buffered before rank 1 receives any. */
    MPI_Bsend(&small, SMALL, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Bsend(medium, MEDIUM, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    MPI_Ibsend(large, LARGE, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Bsend(NULL, 0, MPI_INT, 1, 4, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Status status;
    int count;
    double sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&small, SMALL, MPI_INT, 0, 1, MPI_COMM_WORLD, &status);
    MPI_Recv(medium, MEDIUM, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    for (int i = 0; i < MEDIUM; i++)
      sum += medium[i];
    printf("round %d medium count=%d sum=%.2f\n", round, count, sum);
    MPI_Recv(large, LARGE, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    sum = 0;
    for (int i = 0; i < LARGE; i++)
      sum += large[i];
    printf("round %d large count=%d sum=%.2f\n", round, count, sum);
    MPI_Recv(NULL, 0, MPI_INT, 0, 4, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    printf("round %d small=%d empty count=%d\n", round, small, count);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  char *detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  printf("round %d rank %d detach same-buffer=%d same-size=%d\n", round, rank,
         detached == buffer, detached_size == size);
  free(buffer);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  single_message(rank);
  round_trip(rank, 0);
  round_trip(rank, 1);
  MPI_Finalize();
  return 0;
}
