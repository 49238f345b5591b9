/* mbhybrid generated program: seed 3402 (0xd4a), np 3, 4 phase(s) shrunk by hand to the first 2, intentional bug in some outcomes
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
    if (size != 3) {
        if (rank == 0) fprintf(stderr, "this program needs 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* phase 0: FanIn { root: 2, senders: [Sender { rank: 0, count: 1, isend: false }, Sender { rank: 1, count: 1, isend: true }], style: IrecvTestany, specific: None, follow: Some(Fail { first: 0, second: 1, abort: false }) } on World */
    {
        MPI_Comm comm = MPI_COMM_WORLD;
        int me = rank, csize = size;
        if (csize >= 3) {
            int src[8], val[8], nsrc = 0, v = 0;
            MPI_Status st;
            (void)me; (void)comm; (void)src; (void)val; (void)nsrc; (void)v; (void)st;
            if (me == 2) {
                MPI_Request rq[2];
                int rb[2];
                for (int i = 0; i < 2; i++)
                    MPI_Irecv(&rb[i], 1, MPI_INT, MPI_ANY_SOURCE, 100, comm, &rq[i]);
                int done = 0;
                while (done < 2) {
                    int idx, flag = 0;
                    MPI_Testany(2, rq, &idx, &flag, &st);
                    if (flag && idx != MPI_UNDEFINED) {
                        rec('x', idx);
                        src[nsrc] = st.MPI_SOURCE; val[nsrc] = rb[idx]; nsrc++;
                        rec('w', (st.MPI_SOURCE));
                        done++;
                    }
                }
                for (int i = 0; i < nsrc; i++) acc += val[i];
                /* intentional bug: fails when the first two sources are 0 then 1 */
                assert(!(src[0] == 0 && src[1] == 1));
            }
            if (me == 0) {
                int x = me;
                MPI_Send(&x, 1, MPI_INT, 2, 100, comm);
            }
            if (me == 1) {
                int x = me;
                MPI_Request sq[1];
                MPI_Isend(&x, 1, MPI_INT, 2, 100, comm, &sq[0]);
                MPI_Wait(&sq[0], MPI_STATUS_IGNORE);
            }
        }
    }
    /* phase 1: FanIn { root: 1, senders: [Sender { rank: 0, count: 1, isend: true }, Sender { rank: 2, count: 1, isend: true }], style: IrecvTestany, specific: None, follow: Some(ChosenExtra { to: 1, by_value: true, wildcard: false }) } on World */
    {
        MPI_Comm comm = MPI_COMM_WORLD;
        int me = rank, csize = size;
        if (csize >= 3) {
            int src[8], val[8], nsrc = 0, v = 0;
            MPI_Status st;
            (void)me; (void)comm; (void)src; (void)val; (void)nsrc; (void)v; (void)st;
            if (me == 1) {
                MPI_Request rq[2];
                int rb[2];
                for (int i = 0; i < 2; i++)
                    MPI_Irecv(&rb[i], 1, MPI_INT, MPI_ANY_SOURCE, 200, comm, &rq[i]);
                int done = 0;
                while (done < 2) {
                    int idx, flag = 0;
                    MPI_Testany(2, rq, &idx, &flag, &st);
                    if (flag && idx != MPI_UNDEFINED) {
                        rec('x', idx);
                        src[nsrc] = st.MPI_SOURCE; val[nsrc] = rb[idx]; nsrc++;
                        rec('w', (st.MPI_SOURCE));
                        done++;
                    }
                }
                for (int i = 0; i < nsrc; i++) acc += val[i];
            }
            if (me == 0) {
                int x = me;
                MPI_Request sq[1];
                MPI_Isend(&x, 1, MPI_INT, 1, 200, comm, &sq[0]);
                MPI_Wait(&sq[0], MPI_STATUS_IGNORE);
            }
            if (me == 2) {
                int x = me;
                MPI_Request sq[1];
                MPI_Isend(&x, 1, MPI_INT, 1, 200, comm, &sq[0]);
                MPI_Wait(&sq[0], MPI_STATUS_IGNORE);
            }
            int chosen = -1;
            if (me == 1) chosen = val[0];
            MPI_Bcast(&chosen, 1, MPI_INT, 1, comm);
            if (me == chosen) {
                int x = me;
                MPI_Send(&x, 1, MPI_INT, 1, 260, comm);
            }
            if (me == 1) {
                MPI_Recv(&v, 1, MPI_INT, chosen, 260, comm, &st);
                rec('c', (st.MPI_SOURCE));
            }
        }
    }
    (void)acc; (void)rec;
    printf("sig %d:%s\n", rank, sig);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
