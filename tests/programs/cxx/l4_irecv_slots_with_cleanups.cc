/* mbhybrid-test: np=4 exit=3 interleavings=1 options=--loop-abstraction,auto */
/* l2's receive loop in C++, as miniFE writes it: a local object with a
 * destructor is alive across the loop, so every call in it is an `invoke`
 * whose exception edge leaves the loop for a cleanup landing pad. The
 * loop's markers go on those edges too (after the landing pad), so `build`
 * can mark it for abstraction and --loop-abstraction auto runs one
 * interleaving (exit 3: the abstracted choice points were not explored). */
#include <mpi.h>
#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string label = "rank " + std::to_string(rank);
  int n = size - 1;
  int *slots = new int[n];
  MPI_Request *req = new MPI_Request[n];
  for (int i = 0; i < n; i++)
    MPI_Irecv(&slots[i], 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &req[i]);
  int mine = 10 * rank + 1;
  for (int p = 0; p < size; p++)
    if (p != rank)
      MPI_Send(&mine, 1, MPI_INT, p, 99, MPI_COMM_WORLD);
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  int sum = 0;
  for (int i = 0; i < n; i++)
    sum += slots[i];
  std::printf("%s sum %d\n", label.c_str(), sum);
  delete[] slots;
  delete[] req;
  MPI_Finalize();
  return 0;
}
