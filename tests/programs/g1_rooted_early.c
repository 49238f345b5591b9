/* mbhybrid-test: np=3 exit=1 */
/* Issue 38: a rank that only sends in a rooted collective (the root of
 * Bcast/Scatter(v), a non-root of Gather(v)/Reduce; rank 0 of Scan/Exscan,
 * whose result is its own) may leave it before the others enter
 * (MPI-4.0 §6.1). The early sender E sends to the receiver R after the
 * collective, the other sender A before it, so R's first wildcard receive
 * can take E's message and the assertion fails. argv[1] names the
 * collective ("ibcast": its nonblocking form, waited at once;
 * "bcast_bottom": MPI_Bcast from MPI_BOTTOM, which the tool does not make
 * leave early, so its search is partial); with
 * argv[2] "quiet" there is no assertion, and the run in which E left early
 * completes and checks its data. Messages
 * are large, so the MPI library's own call would wait for the others; E
 * overwrites its send buffer as soon as the call returns, and every rank
 * checks what it received: the tool must not send the overwritten data. */
#include <assert.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 16)

static int value(int rank, int i) { return rank * 100000 + i; }

/* The collective named `name`, blocking or started and waited at once;
 * `root` is its root; `send`/`recv` hold 3 * N ints each. */
static void collective(const char *name, int root, int *send, int *recv) {
  int counts[3] = {N, N, N}, displs[3] = {2 * N, 0, N};
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Comm w = MPI_COMM_WORLD;
  int nb = name[0] == 'i';
  const char *c = name + nb;
  if (!strcmp(c, "bcast"))
    nb ? MPI_Ibcast(send, N, MPI_INT, root, w, &r) : MPI_Bcast(send, N, MPI_INT, root, w);
  else if (!strcmp(c, "bcast_bottom")) {
    /* From MPI_BOTTOM: absolute addresses, which the tool does not copy. */
    MPI_Aint at;
    int len = N;
    MPI_Datatype t;
    MPI_Get_address(send, &at);
    MPI_Type_create_hindexed(1, &len, &at, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Bcast(MPI_BOTTOM, 1, t, root, w);
    MPI_Type_free(&t);
  }
  else if (!strcmp(c, "scatter"))
    nb ? MPI_Iscatter(send, N, MPI_INT, recv, N, MPI_INT, root, w, &r)
       : MPI_Scatter(send, N, MPI_INT, recv, N, MPI_INT, root, w);
  else if (!strcmp(c, "scatterv"))
    nb ? MPI_Iscatterv(send, counts, displs, MPI_INT, recv, N, MPI_INT, root, w, &r)
       : MPI_Scatterv(send, counts, displs, MPI_INT, recv, N, MPI_INT, root, w);
  else if (!strcmp(c, "gather"))
    nb ? MPI_Igather(send, N, MPI_INT, recv, N, MPI_INT, root, w, &r)
       : MPI_Gather(send, N, MPI_INT, recv, N, MPI_INT, root, w);
  else if (!strcmp(c, "gatherv"))
    nb ? MPI_Igatherv(send, N, MPI_INT, recv, counts, displs, MPI_INT, root, w, &r)
       : MPI_Gatherv(send, N, MPI_INT, recv, counts, displs, MPI_INT, root, w);
  else if (!strcmp(c, "reduce"))
    nb ? MPI_Ireduce(send, recv, N, MPI_INT, MPI_SUM, root, w, &r)
       : MPI_Reduce(send, recv, N, MPI_INT, MPI_SUM, root, w);
  else if (!strcmp(c, "scan"))
    nb ? MPI_Iscan(send, recv, N, MPI_INT, MPI_SUM, w, &r) : MPI_Scan(send, recv, N, MPI_INT, MPI_SUM, w);
  else if (!strcmp(c, "exscan"))
    nb ? MPI_Iexscan(send, recv, N, MPI_INT, MPI_SUM, w, &r)
       : MPI_Exscan(send, recv, N, MPI_INT, MPI_SUM, w);
  else
    abort();
  MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* What `rank` must hold after the collective. */
static void check(const char *c, int rank, int root, const int *send, const int *recv) {
  int slot[3] = {2, 0, 1}; /* displs / N */
  for (int i = 0; i < N; i += 997) {
    if (strstr(c, "bcast"))
      assert(send[i] == value(root, i));
    else if (strstr(c, "scatterv"))
      assert(recv[i] == value(0, slot[rank] * N + i));
    else if (strstr(c, "scatter"))
      assert(recv[i] == value(0, rank * N + i));
    else if (strstr(c, "gatherv") && rank == root)
      for (int k = 0; k < 3; k++) assert(recv[slot[k] * N + i] == value(k, i));
    else if (strstr(c, "gather") && rank == root)
      for (int k = 0; k < 3; k++) assert(recv[k * N + i] == value(k, i));
    else if (strstr(c, "reduce") && rank == root)
      assert(recv[i] == value(0, i) + value(1, i) + value(2, i));
    else if (strstr(c, "exscan") && rank > 0)
      assert(recv[i] == (rank == 1 ? value(0, i) : value(0, i) + value(1, i)));
    else if (strstr(c, "scan") && !strstr(c, "exscan")) {
      int sum = 0;
      for (int k = 0; k <= rank; k++) sum += value(k, i);
      assert(recv[i] == sum);
    }
  }
}

int main(int argc, char **argv) {
  int rank, v;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *c = argc > 1 ? argv[1] : "bcast";
  int quiet = argc > 2 && !strcmp(argv[2], "quiet");
  int prefix = strstr(c, "scan") != NULL;
  int to_root = strstr(c, "gather") || strstr(c, "reduce");
  /* E: the early sender, A: the other sender, R: the receiver. */
  int e = prefix ? 0 : 2, a = 1, r = prefix ? 2 : 0;
  int root = to_root ? a : e;
  int *send = malloc(3 * N * sizeof(int)), *recv = malloc(3 * N * sizeof(int));
  for (int i = 0; i < 3 * N; i++) {
    send[i] = strstr(c, "scatter") || strstr(c, "bcast") ? value(root == rank ? 0 : 9, i) : value(rank, i);
    recv[i] = -1;
  }
  if (strstr(c, "bcast") && rank == root)
    for (int i = 0; i < N; i++) send[i] = value(root, i);
  if (rank == r) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    assert(quiet || st.MPI_SOURCE == a); /* R's first match */
    collective(c, root, send, recv);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
  } else if (rank == a) {
    MPI_Send(&rank, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    collective(c, root, send, recv);
  } else {
    collective(c, root, send, recv);
    /* MPI lets the program reuse its buffers now. */
    int *keep = malloc(3 * N * sizeof(int));
    memcpy(keep, recv, 3 * N * sizeof(int));
    memset(send, 0xff, 3 * N * sizeof(int));
    MPI_Send(&rank, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    memcpy(recv, keep, 3 * N * sizeof(int));
    free(keep);
    if (strstr(c, "bcast"))
      for (int i = 0; i < N; i++) send[i] = value(root, i);
  }
  check(c, rank, root, send, recv);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
