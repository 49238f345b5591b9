/*
 * MPI_Pcontrol for libmbhybrid_rt.so.
 *
 * MPI_Pcontrol is variadic and stable Rust cannot define variadic functions,
 * so this file reads the arguments and hands them to Rust
 * (mbhybrid_rt_pcontrol in src/lib.rs). mbhybrid's markers (DESIGN.md,
 * "MPI_Pcontrol markers"):
 *
 *   MPI_Pcontrol(7301, loop_id)   enter an abstracted loop
 *   MPI_Pcontrol(7302, loop_id)   leave it
 *   MPI_Pcontrol(7303, zone_id, k) a zone starts, bounded mixing bound k
 *   MPI_Pcontrol(7304, loop_id)   enter another loop with wildcard sites
 *   MPI_Pcontrol(7305, loop_id)   leave it
 *
 * Markers are recorded and not passed on. Every other level is passed to
 * PMPI_Pcontrol (with the level only) and then recorded.
 *
 * Only the arguments a level defines are read: reading a va_arg that the
 * caller did not pass is undefined behaviour.
 */
#include <stdarg.h>
#include <mpi.h>

/* The return address is MPI_Pcontrol's own: where the program called it
 * (the Rust exports get theirs from a trampoline). */
void mbhybrid_rt_pcontrol(int level, int a, int b, const void *caller);

int MPI_Pcontrol(const int level, ...)
{
    if (level >= 7301 && level <= 7305) {
        int a = 0;
        int b = 0;
        va_list ap;
        va_start(ap, level);
        a = va_arg(ap, int);
        if (level == 7303)
            b = va_arg(ap, int);
        va_end(ap);
        mbhybrid_rt_pcontrol(level, a, b, __builtin_return_address(0));
        return MPI_SUCCESS;
    }
    int rc = PMPI_Pcontrol(level);
    mbhybrid_rt_pcontrol(level, 0, 0, __builtin_return_address(0));
    return rc;
}
