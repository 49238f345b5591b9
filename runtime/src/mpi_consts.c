/*
 * MPI constants that rsmpi's mpi-sys does not expose as RSMPI_* statics,
 * read from the installed mpi.h so that no value is hard-coded (DESIGN.md,
 * "Chosen dependencies").
 */
#include <mpi.h>

void *mbhybrid_rt_mpi_bottom(void)
{
    return MPI_BOTTOM;
}

void *mbhybrid_rt_mpi_in_place(void)
{
    return MPI_IN_PLACE;
}

MPI_Datatype mbhybrid_rt_mpi_byte(void)
{
    return MPI_BYTE;
}

MPI_Datatype mbhybrid_rt_mpi_packed(void)
{
    return MPI_PACKED;
}

/* The MPI_COMBINER_* values runtime/src/typesig.rs follows, in the order of
 * its `Combiners` struct. */
void mbhybrid_rt_combiners(int *out)
{
    out[0] = MPI_COMBINER_NAMED;
    out[1] = MPI_COMBINER_DUP;
    out[2] = MPI_COMBINER_CONTIGUOUS;
    out[3] = MPI_COMBINER_VECTOR;
    out[4] = MPI_COMBINER_HVECTOR;
    out[5] = MPI_COMBINER_INDEXED;
    out[6] = MPI_COMBINER_HINDEXED;
    out[7] = MPI_COMBINER_INDEXED_BLOCK;
    out[8] = MPI_COMBINER_HINDEXED_BLOCK;
    out[9] = MPI_COMBINER_STRUCT;
    out[10] = MPI_COMBINER_SUBARRAY;
    out[11] = MPI_COMBINER_RESIZED;
}

/* Every predefined reduction operation, for the collective signature
 * check (wrap_coll.rs): fills `out` with up to `len` of them and returns
 * how many there are. */
int mbhybrid_rt_predefined_ops(MPI_Op *out, int len)
{
    const MPI_Op ops[] = {MPI_MAX,  MPI_MIN,    MPI_SUM,    MPI_PROD,
                          MPI_LAND, MPI_BAND,   MPI_LOR,    MPI_BOR,
                          MPI_LXOR, MPI_BXOR,   MPI_MINLOC, MPI_MAXLOC,
                          MPI_REPLACE, MPI_NO_OP};
    int n = (int)(sizeof ops / sizeof ops[0]);
    for (int i = 0; i < n && i < len; i++)
        out[i] = ops[i];
    return n;
}
