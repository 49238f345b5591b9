/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Calls programs use beside the wrapped ones, or wrapped ones in forms
 * every_call.c does not use: MPI_IN_PLACE, a user-defined reduction,
 * MPI_PACKED messages and MPI_Get_count on them, a struct datatype with
 * padding (MPI_Get_count and MPI_Get_elements), Alltoallv,
 * Reduce_scatter_block, Exscan, Comm_split_type, Wtime. Each rank's line
 * must be what plain MPI prints. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
typedef struct { int id; double w; } item;
static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt; int *a = in, *b = inout;
  for (int i = 0; i < *len; i++) { int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i]; b[i] = x > y ? x : y; }
}
int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char out[2048]; int o = 0;
  /* IN_PLACE allreduce and a user op */
  int v[2] = {rank + 1, -(rank + 3)};
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Op op; MPI_Op_create(maxabs, 1, &op);
  int m = -(rank * 7), mr;
  MPI_Reduce(&m, &mr, 1, MPI_INT, op, 0, MPI_COMM_WORLD);
  MPI_Op_free(&op);
  o += sprintf(out + o, "allreduce %d %d;", v[0], v[1]);
  if (rank == 0) o += sprintf(out + o, "maxabs %d;", mr);
  /* MPI_PACKED point to point */
  if (rank == 0) {
    char buf[64]; int pos = 0, a = 42; double d = 2.5;
    MPI_Pack(&a, 1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD);
    MPI_Pack(&d, 1, MPI_DOUBLE, buf, 64, &pos, MPI_COMM_WORLD);
    MPI_Send(buf, pos, MPI_PACKED, 1, 3, MPI_COMM_WORLD);
  } else if (rank == 1) {
    char buf[64]; int pos = 0, a, n; double d; MPI_Status st;
    MPI_Recv(buf, 64, MPI_PACKED, 0, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_PACKED, &n);
    MPI_Unpack(buf, 64, &pos, &a, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(buf, 64, &pos, &d, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    o += sprintf(out + o, "packed %d %g count %d;", a, d, n);
  }
  /* a struct datatype */
  MPI_Datatype it; int bl[2] = {1, 1}; MPI_Aint disp[2] = {offsetof(item, id), offsetof(item, w)};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, disp, ty, &it); MPI_Type_commit(&it);
  item items[3];
  if (rank == 2) { for (int i = 0; i < 3; i++) { items[i].id = i; items[i].w = i * 0.5; } MPI_Send(items, 3, it, 0, 4, MPI_COMM_WORLD); }
  if (rank == 0) { MPI_Status st; int n, e; MPI_Recv(items, 3, it, 2, 4, MPI_COMM_WORLD, &st); MPI_Get_count(&st, it, &n); MPI_Get_elements(&st, it, &e);
    o += sprintf(out + o, "struct %d %g count %d elements %d;", items[2].id, items[2].w, n, e); }
  MPI_Type_free(&it);
  /* Alltoallv, Reduce_scatter_block, Exscan */
  int sc[8], sd[8], rc[8], rd[8], sb[8], rb[8];
  for (int i = 0; i < size; i++) { sc[i] = 1; sd[i] = i; rc[i] = 1; rd[i] = i; sb[i] = rank * 10 + i; }
  MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
  o += sprintf(out + o, "alltoallv %d;", rb[size - 1]);
  int rs; MPI_Reduce_scatter_block(sb, &rs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int ex = 0; MPI_Exscan(&rank, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  o += sprintf(out + o, "rsb %d exscan %d;", rs, rank ? ex : 0);
  /* split_type */
  MPI_Comm node; MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int nsize; MPI_Comm_size(node, &nsize); MPI_Comm_free(&node);
  o += sprintf(out + o, "node %d;", nsize);
  double t = MPI_Wtime(); (void)t;
  /* print from rank 0 */
  if (rank == 0) {
    printf("rank 0: %s\n", out);
    for (int r = 1; r < size; r++) { MPI_Recv(out, 2048, MPI_CHAR, r, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); printf("rank %d: %s\n", r, out); }
  } else MPI_Send(out, (int)strlen(out) + 1, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
