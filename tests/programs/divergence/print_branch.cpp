/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37 (miniFE driver.hpp:164, main.cpp:138): branches on the rank
 * that only print and rejoin before the collectives. `std::cout << ..` is
 * an `invoke` whose exception path leaves the function, which made the
 * rest of the function control-dependent on the rank test. */
#include <mpi.h>
#include <iostream>
#include <string>

struct Doc {
  std::string text;
  void add(const std::string &key, double value) { text += key + ": " + std::to_string(value) + "\n"; }
};

static void add_params(Doc &doc, int n) { doc.add("n", n); }

static double total(double mine) {
  double sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Doc doc;
  if (rank == 0) {
    add_params(doc, 16);
    std::cout << "starting" << std::endl;
  }
  double t0 = MPI_Wtime();
  double sum = total(rank + 1.0);
  if (rank == 0) {
    std::cout << "sum " << sum << ", " << (MPI_Wtime() - t0 >= 0) << std::endl;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    std::cout << doc.text;
  MPI_Finalize();
  return 0;
}
