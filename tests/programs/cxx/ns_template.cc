/* mbhybrid-test: np=3 exit=1 interleavings=2 */
/* Issue 17: C++ functions are named as the source spells them. The
 * wildcard receive is in a function template in a namespace, whose symbol
 * is mangled (`_ZN2ns6reduceIiEET_PS1_i`); `mbhybrid analyze` and the
 * finding must both say `ns::reduce<int>(int*, int)`. Rank 0 aborts when
 * rank 2's message was the first it received. */
#include <cstdlib>
#include <mpi.h>

namespace ns {

/* The tag, not the datatype, is the second parameter: MPI_Datatype is
 * `int` in MPICH and a pointer in Open MPI, which would change the name. */
template <typename T> T reduce(T *values, int tag) {
  MPI_Recv(&values[0], 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&values[1], 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* After both receives: the first run, whichever message came first,
   * sees the other and so offers it (aborting between them, the first run
   * could end before the other message was seen: one interleaving). */
  if (values[0] == 2)
    std::abort(); // expect: assertion rank=0
  return values[0] + values[1];
}

} // namespace ns

int main(int argc, char **argv) {
  int rank, values[2] = {0, 0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    ns::reduce<int>(values, 0);
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
