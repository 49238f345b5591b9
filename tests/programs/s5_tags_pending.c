/* mbhybrid-test: np=3 exit=0 interleavings=4 */
/* SCENARIOS.md S5 (seed 000 Fig 5.14): two pending wildcard Irecvs with
 * tags 2 and 3, then two wildcard Recvs; P1 and P2 each send one message
 * of each tag, in opposite orders. Every wildcard receive can take P1 or P2.
 * When both Irecvs take P1's messages, P2's tag-3 send has no posted receive
 * until P0 gets P2's tag-2 message, which P2 sends after it: the run
 * completes only because MPI buffers P2's first send (buffering-hazard). */
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, a = 0, b = 0, c = 0, d = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request h0, h1;
    MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &h0);
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &h1);
    MPI_Recv(&c, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&d, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&h0, MPI_STATUS_IGNORE);
    MPI_Wait(&h1, MPI_STATUS_IGNORE);
  } else {
    int first = rank == 1 ? 2 : 3, second = rank == 1 ? 3 : 2, v = rank;
    MPI_Send(&v, 1, MPI_INT, 0, first, MPI_COMM_WORLD); // expect: buffering-hazard rank=2
    MPI_Send(&v, 1, MPI_INT, 0, second, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
