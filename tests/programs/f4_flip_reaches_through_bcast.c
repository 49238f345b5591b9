/* mbhybrid-test: np=4 exit=0 interleavings=2 */
/* Issue 11, soak seed 3086 shrunk: rank 3 takes two MPI_ANY_SOURCE
 * messages (from ranks 0 and 2) and broadcasts the value of the first; the
 * rank it names then sends to rank 1's wildcard receive. Rank 1's receive
 * is causally after rank 3's first receive (through the MPI_Bcast), so
 * flipping that receive must leave rank 1's free. Under vector clocks the
 * search ordered choice points by the own component of the clock, in which
 * rank 1's receive (0) came before the flip (rank 3's, 0 at rank 3): it was
 * forced to its old sender, which no longer sends. Both outcomes of rank
 * 3's first receive must run, each with rank 1 taking the rank named. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, first = -1, v = 0, x;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 3) {
        for (int i = 0; i < 2; i++) {
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, &st);
            if (i == 0)
                first = v;
        }
    }
    if (rank == 0 || rank == 2) {
        x = rank;
        MPI_Send(&x, 1, MPI_INT, 3, 100, MPI_COMM_WORLD);
    }
    MPI_Bcast(&first, 1, MPI_INT, 3, MPI_COMM_WORLD);
    if (rank == first) {
        x = rank;
        MPI_Send(&x, 1, MPI_INT, 1, 160, MPI_COMM_WORLD);
    }
    if (rank == 1) {
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 160, MPI_COMM_WORLD, &st);
        printf("sig 1: took %d\n", st.MPI_SOURCE);
    }
    MPI_Finalize();
    return 0;
}
