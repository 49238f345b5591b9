/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 18: many correct buffer arguments, none of which the static
 * buffer check may report: matching scalars, arrays and heap blocks,
 * signed and unsigned of one size, byte views, `void *` variables and
 * parameters, a 2-D array sent whole, offsets that fit, unions, a struct
 * with a derived datatype, `MPI_IN_PLACE`, complex numbers as pairs, and
 * collectives whose root-only buffers are placeholders elsewhere. */
#include <complex.h>
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

struct cell {
  int id;
  double value;
};

union word {
  long l;
  double d;
};

static double grid[10][10];

static void send_any(void *buffer, int count, MPI_Datatype type, int dest) {
  MPI_Send(buffer, count, type, dest, 9, MPI_COMM_WORLD);
}

static void recv_doubles(double *values, int count, int source) {
  MPI_Recv(values, count, MPI_DOUBLE, source, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  int rank, size, i;
  unsigned flags = 3;
  long big = 1L << 40;
  double local[20];
  double *heap = calloc(20, sizeof(double));
  double _Complex z[2] = {1.0 + 2.0 * I, 3.0 - 1.0 * I};
  union word w;
  struct cell cells[4];
  MPI_Datatype cell_type;
  int lengths[2] = {1, 1};
  MPI_Aint offsets[2] = {offsetof(struct cell, id), offsetof(struct cell, value)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  int gathered[2], mine;
  double dummy;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Type_create_struct(2, lengths, offsets, types, &cell_type);
  MPI_Type_commit(&cell_type);
  for (i = 0; i < 20; i++) {
    local[i] = i;
    heap[i] = 2 * i;
  }
  for (i = 0; i < 4; i++) {
    cells[i].id = i;
    cells[i].value = i / 2.0;
  }
  w.d = 1.0;
  mine = rank;
  if (rank == 0) {
    MPI_Send(&flags, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    MPI_Send(&big, 1, MPI_INT64_T, 1, 1, MPI_COMM_WORLD);
    MPI_Send(local, 20, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    MPI_Send(&local[10], 10, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
    MPI_Send(heap, 20 * sizeof(double), MPI_BYTE, 1, 4, MPI_COMM_WORLD);
    MPI_Send(grid, 100, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    MPI_Send(z, 4, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD);
    MPI_Send(&w, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
    MPI_Send(cells, 4, cell_type, 1, 8, MPI_COMM_WORLD);
    send_any(local, 5, MPI_DOUBLE, 1);
  } else {
    MPI_Recv(&flags, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&big, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(heap, 20, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&heap[10], 10, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(local, 20 * sizeof(double), MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(grid, 100, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(z, 4, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&w, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(cells, 4, cell_type, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    recv_doubles(local, 5, 0);
  }
  MPI_Bcast(local, 20, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, local, 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(local, heap, 20, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Reduce(local, rank == 0 ? heap : &dummy, 20, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Bcast(z, 2, MPI_C_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD);
  MPI_Bcast(&flags, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  MPI_Gather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Sendrecv_replace(&mine, 1, MPI_INT, (rank + 1) % size, 10, (rank + size - 1) % size, 10,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&cell_type);
  free(heap);
  MPI_Finalize();
  return 0;
}
