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

MPI_Datatype mbhybrid_rt_mpi_byte(void)
{
    return MPI_BYTE;
}

MPI_Datatype mbhybrid_rt_mpi_packed(void)
{
    return MPI_PACKED;
}
