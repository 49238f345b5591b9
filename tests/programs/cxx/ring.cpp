/* A C++ program (std::vector) that builds and runs clean: each rank's
 * rank, gathered. Shared by instrument/tests (mbhybrid build) and
 * tests/e2e/wrappers.rs (mbhybrid-c++). */
#include <mpi.h>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> all(size);
  MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Finalize();
  return all.back() == size - 1 ? 0 : 1;
}
