/* Issue 37: the true positive next to print_branch.cpp. Rank 0 prints,
 * then makes a barrier the other ranks skip; `std::cout << ..` may throw,
 * and the exception path is not what hides the barrier's branch. Analyzed
 * only (a run would hang). */
#include <mpi.h>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string name = "rank";
  if (rank == 0) {
    std::cout << name << " 0 waits" << std::endl;
    MPI_Barrier(MPI_COMM_WORLD); // expect: collective-divergence
  }
  MPI_Finalize();
  return 0;
}
