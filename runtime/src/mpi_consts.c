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

/* Every predefined datatype of MPI 3.1 that C can name, for the type
 * signatures (typesig.rs): a named type's signature code is its index here,
 * the same in every process. Its handle cannot serve: Open MPI's handles
 * are addresses of library globals, which differ between processes.
 * Fills `out` with up to `len` of them and returns how many there are. */
int mbhybrid_rt_predefined_types(MPI_Datatype *out, int len)
{
    const MPI_Datatype types[] = {
        MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG_INT,
        MPI_LONG_LONG, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT,
        MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT,
        MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T,
        MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_AINT, MPI_COUNT, MPI_OFFSET,
        MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX, MPI_BYTE, MPI_PACKED, MPI_FLOAT_INT,
        MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
        MPI_LONG_DOUBLE_INT,
        MPI_CHARACTER, MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION,
        MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_2REAL,
        MPI_2DOUBLE_PRECISION, MPI_2INTEGER,
    };
    int n = (int)(sizeof types / sizeof types[0]);
    for (int i = 0; i < n && i < len; i++)
        out[i] = types[i];
    return n;
}

/* The bytes a receive's status counts, and setting them, read and written
 * where this MPI's mpi.h lays the count out, without a call into the
 * library: MPI_Get_elements_x and MPI_Status_set_elements_x on every
 * message were a tenth of the runtime's cost per small message
 * (BENCHMARKS.md, "Runtime overhead"). Both keep the cancelled flag.
 *
 * MPICH (and its derivatives) keep the count in bytes as count_lo and,
 * above bit 0 (the cancelled flag) of count_hi_and_cancelled, its high
 * bits (MPIR_STATUS_GET_COUNT / MPIR_STATUS_SET_COUNT); Open MPI keeps it
 * in bytes in _ucount. Elsewhere mbhybrid_rt_status_bytes returns -1 and
 * mbhybrid_rt_status_set_bytes 0, and the runtime asks MPI. */
long long mbhybrid_rt_status_bytes(const MPI_Status *status)
{
#if defined(MPICH)
    unsigned long long lo = (unsigned int)status->count_lo;
    unsigned long long hi = (unsigned int)status->count_hi_and_cancelled >> 1;
    return (long long)(lo | hi << 32);
#elif defined(OPEN_MPI)
    return (long long)status->_ucount;
#else
    (void)status;
    return -1;
#endif
}

int mbhybrid_rt_status_set_bytes(MPI_Status *status, long long bytes)
{
#if defined(MPICH)
    unsigned long long count = (unsigned long long)bytes;
    status->count_lo = (int)(unsigned int)count;
    status->count_hi_and_cancelled =
        (int)((unsigned int)(count >> 32) << 1 |
              ((unsigned int)status->count_hi_and_cancelled & 1u));
    return 1;
#elif defined(OPEN_MPI)
    status->_ucount = (size_t)bytes;
    return 1;
#else
    (void)status;
    (void)bytes;
    return 0;
#endif
}

/* The one-sided communication constants runtime/src/rma.rs translates into
 * the trace's own codes: lock types, then the fence asserts. */
void mbhybrid_rt_rma_consts(int *out)
{
    out[0] = MPI_LOCK_EXCLUSIVE;
    out[1] = MPI_LOCK_SHARED;
    out[2] = MPI_MODE_NOSUCCEED;
    out[3] = MPI_MODE_NOPRECEDE;
}
