/* What taking a call's site from its return address costs (issue 17 item
 * 3; BENCHMARKS.md, "Call sites from return addresses"): N calls of a cheap
 * wrapped MPI function, best of REPS, in ns per call.
 *
 *   mpicc -O2 -o plain bench/call_site.c               # sites from return addresses
 *   mpicc -O2 -DALTERNATE -o alternate bench/call_site.c   # two sites in turn
 *   mpicc -O2 -DLABELLED -o labelled bench/call_site.c \
 *       -L target/release -Wl,--no-as-needed -lmbhybrid_rt \
 *       -Wl,--unresolved-symbols=ignore-all            # the program stores its site, as `build`'s do
 *   mkdir -p /tmp/t; for p in plain alternate labelled; do \
 *     MBHYBRID_TRACE_DIR=/tmp/t LD_LIBRARY_PATH=target/release \
 *     LD_PRELOAD=target/release/libmbhybrid_rt.so ./$p [N [REPS]]; done
 *
 * Run under `valgrind --tool=callgrind` with N = 0 and N = 100000 (REPS 1)
 * for instructions per call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef LABELLED
extern unsigned int mbhybrid_site;
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Errhandler eh;
  const int n = argc > 1 ? atoi(argv[1]) : 2000000;
  const int reps = argc > 2 ? atoi(argv[2]) : 7;
  double best = 1e9;
  for (int rep = 0; rep < reps; rep++) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
#ifdef LABELLED
      mbhybrid_site = 1;
#endif
#ifdef ALTERNATE
      if (i & 1)
        MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
      else
#endif
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    }
    double t = (MPI_Wtime() - t0) / (n > 0 ? n : 1) * 1e9;
    if (t < best)
      best = t;
  }
  printf("%.2f ns/call\n", best);
  MPI_Finalize();
  return 0;
}
