/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* The runtime's two ways to put a message on the wire (runtime/src/packed.rs):
 * small messages of named contiguous types go packed as MPI_BYTE, the rest
 * as a struct datatype, and each side chooses on its own. Rank 1 prints
 * what MPI_Get_count / MPI_Get_elements / MPI_Probe report and what
 * arrived; the output must be the same as without the tool. The one
 * truncated receive is the program's own MPI error. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double sum(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (i % 7 + 1);
  return s;
}

static void report(const char *what, MPI_Status *st, MPI_Datatype type) {
  int count = -2, elements = -2;
  MPI_Get_count(st, type, &count);
  MPI_Get_elements(st, type, &elements);
  printf("%s: count %d elements %d source %d tag %d\n", what, count, elements, st->MPI_SOURCE,
         st->MPI_TAG);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  enum { BIG = 5000 }; /* 40000 bytes: past the packed path's limit */
  double *big = malloc(BIG * sizeof(double));
  MPI_Datatype four_ints;
  MPI_Type_contiguous(4, MPI_INT, &four_ints);
  MPI_Type_commit(&four_ints);
  MPI_Status st;
  if (rank == 0) {
    int small[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < BIG; i++) big[i] = i * 0.5;
    MPI_Send(small, 3, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Send(big, BIG, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
    MPI_Send(small, 2, four_ints, 1, 4, MPI_COMM_WORLD); /* struct to packed */
    MPI_Send(small, 6, MPI_INT, 1, 5, MPI_COMM_WORLD);   /* packed to struct */
    struct { double d; int i; } pairs[2] = {{1.5, 7}, {2.5, 9}};
    MPI_Send(pairs, 2, MPI_DOUBLE_INT, 1, 6, MPI_COMM_WORLD); /* a type with a hole */
    MPI_Send(small, 5, MPI_INT, 1, 7, MPI_COMM_WORLD);        /* truncated at rank 1 */
    short shorts[7] = {10, 11, 12, 13, 14, 15, 16};
    MPI_Send(shorts, 7, MPI_SHORT, 1, 8, MPI_COMM_WORLD); /* probed */
    MPI_Ssend(small, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    int back = 0;
    MPI_Sendrecv(small + 4, 4, MPI_INT, 1, 10, &back, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &st);
    MPI_Send(small, 8, MPI_INT, 1, 12, MPI_COMM_WORLD); /* Irecv (struct) at rank 1 */
    MPI_Send(big, BIG, MPI_DOUBLE, 1, 13, MPI_COMM_WORLD);
    MPI_Send(small, 2, MPI_INT, 1, 14, MPI_COMM_WORLD); /* wildcard receive */
    MPI_Request reqs[3];
    MPI_Isend(small + 1, 3, MPI_INT, 1, 15, MPI_COMM_WORLD, &reqs[0]); /* Request_get_status */
    MPI_Isend(big, 100, MPI_DOUBLE, 1, 16, MPI_COMM_WORLD, &reqs[1]);  /* past a slot's room */
    MPI_Isend(small, 6, MPI_INT, 1, 17, MPI_COMM_WORLD, &reqs[2]);     /* truncated Irecv */
    MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    int *many = malloc(1000 * sizeof(int));
    for (int i = 0; i < 1000; i++) many[i] = 3 * i;
    MPI_Isend(many, 1000, MPI_INT, 1, 18, MPI_COMM_WORLD, &reqs[0]); /* a room of its own */
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    int swap[3] = {7, 8, 9};
    MPI_Sendrecv_replace(swap, 3, MPI_INT, 1, 19, 1, 20, MPI_COMM_WORLD, &st);
    MPI_Send(swap, 3, MPI_INT, 1, 21, MPI_COMM_WORLD); /* rank 1 prints what rank 0 got */
    free(many);
  } else if (rank == 1) {
    int v[16] = {0};
    MPI_Recv(v, 10, MPI_INT, 0, 1, MPI_COMM_WORLD, &st); /* a larger buffer */
    report("3 ints into 10", &st, MPI_INT);
    printf("  values %d %d %d %d\n", v[0], v[1], v[2], v[3]);
    MPI_Recv(big, BIG, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &st);
    report("5000 doubles", &st, MPI_DOUBLE);
    printf("  checksum %.1f\n", sum(big, BIG));
    MPI_Recv(v, 4, MPI_CHAR, 0, 3, MPI_COMM_WORLD, &st);
    report("0 chars", &st, MPI_CHAR);
    MPI_Recv(v, 16, MPI_INT, 0, 4, MPI_COMM_WORLD, &st);
    report("2 x four_ints as ints", &st, MPI_INT);
    printf("  values %d %d %d\n", v[0], v[7], v[8]);
    MPI_Recv(v, 3, four_ints, 0, 5, MPI_COMM_WORLD, &st);
    report("6 ints as four_ints", &st, four_ints);
    report("6 ints as ints", &st, MPI_INT);
    struct { double d; int i; } pairs[4];
    MPI_Recv(pairs, 4, MPI_DOUBLE_INT, 0, 6, MPI_COMM_WORLD, &st);
    report("2 double_int", &st, MPI_DOUBLE_INT);
    printf("  values %.1f %d %.1f %d\n", pairs[0].d, pairs[0].i, pairs[1].d, pairs[1].i);
    int rc = MPI_Recv(v, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &st); // expect: mpi-error rank=1
    int cls = -1;
    MPI_Error_class(rc, &cls);
    printf("5 ints into 2: %s\n", cls == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another error");
    MPI_Probe(0, 8, MPI_COMM_WORLD, &st);
    report("probe of 7 shorts", &st, MPI_SHORT);
    short shorts[8] = {0};
    MPI_Recv(shorts, 8, MPI_SHORT, 0, 8, MPI_COMM_WORLD, &st);
    report("7 shorts", &st, MPI_SHORT);
    printf("  values %d %d\n", shorts[0], shorts[6]);
    MPI_Recv(v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &st);
    report("ssend", &st, MPI_INT);
    int reply = 42;
    MPI_Sendrecv(&reply, 1, MPI_INT, 0, 11, v, 8, MPI_INT, 0, 10, MPI_COMM_WORLD, &st);
    report("sendrecv", &st, MPI_INT);
    printf("  values %d %d\n", v[0], v[3]);
    MPI_Request req;
    MPI_Irecv(v, 16, MPI_INT, 0, 12, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    report("irecv of 8 ints", &st, MPI_INT);
    MPI_Recv(big, BIG, MPI_DOUBLE, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("status ignored: checksum %.1f\n", sum(big, BIG));
    MPI_Recv(v, 4, MPI_INT, MPI_ANY_SOURCE, 14, MPI_COMM_WORLD, &st);
    report("wildcard", &st, MPI_INT);
    int flag = 0;
    MPI_Irecv(v, 10, MPI_INT, 0, 15, MPI_COMM_WORLD, &req);
    while (!flag) MPI_Request_get_status(req, &flag, &st);
    report("get_status of 3 ints", &st, MPI_INT);
    printf("  values before the wait %d %d %d\n", v[0], v[1], v[2]);
    MPI_Wait(&req, &st);
    report("waited", &st, MPI_INT);
    MPI_Irecv(big, 200, MPI_DOUBLE, 0, 16, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    report("irecv of 100 doubles", &st, MPI_DOUBLE);
    printf("  checksum %.1f\n", sum(big, 100));
    MPI_Irecv(v, 4, MPI_INT, 0, 17, MPI_COMM_WORLD, &req);
    rc = MPI_Wait(&req, &st); // expect: mpi-error rank=1
    MPI_Error_class(rc, &cls);
    printf("6 ints into an Irecv of 4: %s\n", cls == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : "another error");
    int *many = calloc(1024, sizeof(int));
    MPI_Irecv(many, 1024, MPI_INT, 0, 18, MPI_COMM_WORLD, &req);
    for (flag = 0; !flag;) MPI_Test(&req, &flag, &st);
    long total = 0;
    for (int i = 0; i < 1024; i++) total += many[i];
    report("irecv of 1000 ints", &st, MPI_INT);
    printf("  sum %ld last %d\n", total, many[999]);
    free(many);
    int swap[3] = {4, 5, 6};
    MPI_Sendrecv_replace(swap, 3, MPI_INT, 0, 20, 0, 19, MPI_COMM_WORLD, &st);
    report("sendrecv_replace", &st, MPI_INT);
    printf("  values %d %d %d\n", swap[0], swap[1], swap[2]);
    MPI_Recv(swap, 3, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("  rank 0 got %d %d %d\n", swap[0], swap[1], swap[2]);
    MPI_Recv(v, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    report("proc_null", &st, MPI_INT);
  }
  MPI_Type_free(&four_ints);
  free(big);
  MPI_Finalize();
  return 0;
}
