/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* Issue 17: C as gcc 12's `mpicc` takes it and clang 16 refuses by
 * default: library functions called without their headers (`time`,
 * `srand`, `memset`, `strlen`), an MPI handle initialised from NULL
 * (MPICH's handles are ints), a K&R function with implicit `int`, a
 * `return;` in an int function, and a reduction function with typed
 * pointers passed to `MPI_Op_create`. Rank 0's wildcard receive can take
 * rank 1's message or rank 2's; only rank 2's trips the assertion. */
#include <assert.h>
#include <stdio.h>
#include <mpi.h>

static int verbose;

/* K&R definition: return and parameter types default to int. */
small(v) { return v < 2; }

int report(int v) {
  if (!verbose)
    return;
  printf("got %d\n", v);
  return 0;
}

void max_ints(int *in, int *inout, int *len, MPI_Datatype *type) {
  int i;
  for (i = 0; i < *len; i++)
    if (in[i] > inout[i])
      inout[i] = in[i];
}

int main(int argc, char **argv) {
  MPI_Comm comm = NULL;
  MPI_Op op;
  char name[32];
  int rank, v, best;

  MPI_Init(&argc, &argv);
  comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  srand(time(0) + rank);
  memset(name, 0, sizeof name);
  verbose = strlen(argv[0]) == 0;
  MPI_Op_create(max_ints, 1, &op);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, MPI_STATUS_IGNORE);
    report(v);
    assert(small(v)); // expect: assertion rank=0
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, MPI_STATUS_IGNORE);
  } else {
    v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, 0, comm);
  }
  MPI_Allreduce(&rank, &best, 1, MPI_INT, op, comm);
  MPI_Op_free(&op);
  MPI_Finalize();
  return best == 2 ? 0 : 1;
}
