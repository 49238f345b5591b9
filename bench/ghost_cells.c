/* bench/ghost_cells.c: a 1-D heat stencil with ghost cells in the same
 * array, overlapping the halo exchange with the interior update (the
 * usual pattern). Correct:
 * the ghosts u[0] and u[n+1] are received, the edges u[1] and u[n] sent,
 * and none of them is touched until MPI_Waitall. The cost of the access
 * checks while the halo is pending (BENCHMARKS.md, "Access checks"):
 *   mbhybrid build -o on bench/ghost_cells.c -- -O2
 *   mbhybrid build --no-access-checks -o off bench/ghost_cells.c -- -O2
 *   mbhybrid verify -n 2 ./on 2000000   (rank 0 prints the seconds) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size, n = argc > 1 ? atoi(argv[1]) : 100000, steps = 50;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double *u = calloc(n + 2, sizeof *u), *v = calloc(n + 2, sizeof *v);
  for (int i = 1; i <= n; i++) u[i] = rank * n + i;
  int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  double t0 = MPI_Wtime();
  for (int s = 0; s < steps; s++) {
    MPI_Request rq[4];
    MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[3]);
    for (int i = 2; i < n; i++) v[i] = (u[i - 1] + u[i] + u[i + 1]) / 3;
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    v[1] = (u[0] + u[1] + u[2]) / 3;
    v[n] = (u[n - 1] + u[n] + u[n + 1]) / 3;
    double *t = u; u = v; v = t;
  }
  double local = 0, total = 0;
  for (int i = 1; i <= n; i++) local += u[i];
  MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("sum %.6e in %.3f s\n", total, MPI_Wtime() - t0);
  free(u); free(v);
  MPI_Finalize();
  return 0;
}
