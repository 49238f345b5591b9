/* mbhybrid generated program: seed 3125 (0xc35), np 5, 1 phase(s), intentional bug in some outcomes
 * from mbh_tests::generator::Program::generate (possibly shrunk) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>

static char sig[4096];
static int sig_len = 0;

/* Appends " KV" to this rank's signature. */
static void rec(char kind, int value) {
    if (sig_len < (int)sizeof sig - 32)
        sig_len += snprintf(sig + sig_len, sizeof sig - (size_t)sig_len, " %c%d", kind, value);
}

int main(int argc, char **argv) {
    int rank, size, acc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 5) {
        if (rank == 0) fprintf(stderr, "this program needs 5 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* phase 0: CrossDeadlock { receivers: 2 } on World */
    {
        MPI_Comm comm = MPI_COMM_WORLD;
        int me = rank, csize = size;
        if (csize >= 4) {
            int src[8], val[8], nsrc = 0, v = 0;
            MPI_Status st;
            (void)me; (void)comm; (void)src; (void)val; (void)nsrc; (void)v; (void)st;
            if (me >= 2) {
                int x = me;
                for (int i = 0; i < 2; i++)
                    MPI_Send(&x, 1, MPI_INT, i, 100, comm);
            }
            if (me < 2) {
                int f, g, prev = (me + 1) % 2;
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 100, comm, &st);
                f = st.MPI_SOURCE;
                rec('r', (f));
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 100, comm, &st);
                rec('r', (st.MPI_SOURCE));
                /* swap first sources around the ring */
                MPI_Sendrecv(&f, 1, MPI_INT, (me + 1) % 2, 101, &g, 1, MPI_INT, prev, 101, comm, &st);
                rec('e', (st.MPI_SOURCE));
                /* intentional bug: never sent; blocks when both first sources are 3 */
                if (f == 3 && g == 3) {
                    MPI_Recv(&v, 1, MPI_INT, prev, 102, comm, &st);
                    rec('z', (prev));
                }
            }
        }
    }
    (void)acc; (void)rec;
    printf("sig %d:%s\n", rank, sig);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
