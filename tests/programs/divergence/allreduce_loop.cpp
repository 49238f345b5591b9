/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37 (HPCG CG.cpp:100): a conjugate-gradient loop whose condition
 * reads the residual norm, written through a reference by a dot product
 * that takes it from MPI_Allreduce: the same on every rank. The timer
 * (MPI_Wtime) goes to another reference; the caller's norms are fields of
 * a struct that also holds the rank. Neither reaches the condition. */
#include <mpi.h>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

struct Geometry {
  int rank;
  int n;
};

static double mytimer() { return MPI_Wtime(); }

static void dot(int n, const double *x, const double *y, double &result, double &time) {
  double t0 = mytimer();
  double local = 0, global = 0;
  for (int i = 0; i < n; i++)
    local += x[i] * y[i];
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  result = global;
  time += mytimer() - t0;
}

static int cg(const Geometry &geom, double *r, int max_iter, double tolerance, int &niters,
              double &normr, double &normr0) {
  double time = 0;
  std::vector<double> history;
  normr = 0;
  if (geom.rank == 0)
    std::cout << "WARNING: PERFORMING UNPRECONDITIONED ITERATIONS" << std::endl;
  dot(geom.n, r, r, normr, time);
  normr = std::sqrt(normr);
  if (geom.rank == 0)
    std::printf("initial residual %g\n", normr);
  normr0 = normr;
  int k;
  for (k = 1; k <= max_iter && normr / normr0 > tolerance; k++) {
    for (int i = 0; i < geom.n; i++)
      r[i] *= 0.5;
    dot(geom.n, r, r, normr, time);
    normr = std::sqrt(normr);
    history.push_back(normr);
    if (geom.rank == 0)
      std::printf("iteration %d residual %g\n", k, normr);
  }
  niters = k - 1;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Geometry *geom = new Geometry;
  MPI_Comm_rank(MPI_COMM_WORLD, &geom->rank);
  geom->n = 4;
  double r[4];
  for (int i = 0; i < 4; i++)
    r[i] = geom->rank + i + 1;
  struct {
    int rank;
    int niters;
    double normr, normr0;
  } data;
  data.rank = geom->rank;
  cg(*geom, r, 50, 1e-3, data.niters, data.normr, data.normr0);
  if (data.rank == 0)
    std::printf("%d iterations\n", data.niters);
  delete geom;
  MPI_Finalize();
  return 0;
}
