/* Where a piggybacked message's time goes, at the MPI level (for
 * BENCHMARKS.md, "Where the time goes"): ping-pong latency between ranks 0
 * and 1 of a message carrying a 40-byte header (mbhybrid's, with Lamport
 * clocks) in the ways the runtime can send it, without the runtime:
 *   plain                    the data alone (no header), as the program sends it
 *   struct per message       header + data as a struct datatype from MPI_BOTTOM,
 *                            created, committed and freed per message
 *   struct cached            the same struct datatype made once
 *   packed MPI_BYTE          header + data copied into scratch, sent as MPI_BYTE
 *   packed + 2 status calls  and the receiver's MPI_Get_elements_x +
 *                            MPI_Status_set_elements_x (the status fix)
 * Each line is the best of 7 rounds (the machine is shared).
 *   mpicc -O2 -o wire_cost bench/wire_cost.c && mpiexec -n 2 ./wire_cost [ITERATIONS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long long hdr_s[5], hdr_r[5];
static char scratch_s[1 << 17], scratch_r[1 << 17];
static int rank;
enum { PLAIN, STRUCT_PER_MSG, STRUCT_CACHED, PACKED, PACKED_FIX, NMODES };
static const char *names[] = {"plain", "struct per message", "struct cached", "packed MPI_BYTE", "packed + 2 status calls"};
static MPI_Datatype make(void *h, void *buf, int bytes) {
  MPI_Aint a[2]; MPI_Get_address(h, &a[0]); MPI_Get_address(buf, &a[1]);
  int l[2] = {40, bytes}; MPI_Datatype t[2] = {MPI_BYTE, MPI_CHAR}, ty;
  MPI_Type_create_struct(2, l, a, t, &ty); MPI_Type_commit(&ty); return ty;
}
static void xsend(int mode, char *buf, int bytes, int peer, MPI_Datatype cached) {
  MPI_Datatype ty;
  switch (mode) {
  case PLAIN: MPI_Send(buf, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD); break;
  case STRUCT_PER_MSG: ty = make(hdr_s, buf, bytes); MPI_Send(MPI_BOTTOM, 1, ty, peer, 0, MPI_COMM_WORLD); MPI_Type_free(&ty); break;
  case STRUCT_CACHED: MPI_Send(MPI_BOTTOM, 1, cached, peer, 0, MPI_COMM_WORLD); break;
  default: memcpy(scratch_s, hdr_s, 40); memcpy(scratch_s + 40, buf, bytes);
    MPI_Send(scratch_s, 40 + bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
  }
}
static void xrecv(int mode, char *buf, int bytes, int peer, MPI_Datatype cached) {
  MPI_Datatype ty; MPI_Status st; MPI_Count n;
  switch (mode) {
  case PLAIN: MPI_Recv(buf, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &st); break;
  case STRUCT_PER_MSG: ty = make(hdr_r, buf, bytes); MPI_Recv(MPI_BOTTOM, 1, ty, peer, 0, MPI_COMM_WORLD, &st); MPI_Type_free(&ty); break;
  case STRUCT_CACHED: MPI_Recv(MPI_BOTTOM, 1, cached, peer, 0, MPI_COMM_WORLD, &st); break;
  default: MPI_Recv(scratch_r, 40 + bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &st);
    memcpy(hdr_r, scratch_r, 40); memcpy(buf, scratch_r + 40, bytes);
    if (mode == PACKED_FIX) { MPI_Get_elements_x(&st, MPI_BYTE, &n); MPI_Status_set_elements_x(&st, MPI_BYTE, n - 40); }
  }
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  static char buf[1 << 16];
  int sizes[] = {1, 256, 1024, 4096, 8192, 16384, 32768, 65536 - 64};
  for (int s = 0; s < 8; s++) {
    int bytes = sizes[s];
    MPI_Datatype cs = make(hdr_s, buf, bytes), cr = make(hdr_r, buf, bytes);
    double best[NMODES];
    for (int m = 0; m < NMODES; m++) best[m] = 1e9;
    for (int round = 0; round < 7; round++)
    for (int mode = 0; mode < NMODES; mode++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t = MPI_Wtime();
      for (int i = 0; i < n; i++) {
        if (rank == 0) { xsend(mode, buf, bytes, 1, cs); xrecv(mode, buf, bytes, 1, cr); }
        else { xrecv(mode, buf, bytes, 0, cr); xsend(mode, buf, bytes, 0, cs); }
      }
      t = MPI_Wtime() - t;
      if (t < best[mode]) best[mode] = t;
    }
    if (rank == 0) for (int m = 0; m < NMODES; m++) printf("%6d B  %-26s %.3f us\n", bytes, names[m], best[m] / n / 2 * 1e6);
    MPI_Type_free(&cs); MPI_Type_free(&cr);
  }
  MPI_Finalize();
}
