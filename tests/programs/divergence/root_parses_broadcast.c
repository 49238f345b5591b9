/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37 (miniAMR's main): rank 0 parses the command line into globals
 * and packs them into params[], broadcasts it, and the other ranks copy
 * params[] back into the globals. Every rank holds the same values after
 * the branch, so the collectives under branches on them are not warned
 * about, at build nor in the run (which, with no arguments, reaches the
 * time steps' reductions and not the report's barrier). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int my_pe, num_pes;
int num_tsteps, report_perf, num_refine, block_change, reorder, lb_method;

static int check_input(void) { return num_tsteps < 0 || num_refine < 0; }

int main(int argc, char **argv) {
  int i, params[6];
  double x = 1.0, sum = 0.0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_pe);
  MPI_Comm_size(MPI_COMM_WORLD, &num_pes);
  num_tsteps = 2;
  report_perf = 0;
  num_refine = 1;
  block_change = 0;
  reorder = -1;
  lb_method = 0;
  if (!my_pe) {
    for (i = 1; i < argc; i++)
      if (!strcmp(argv[i], "--num_tsteps"))
        num_tsteps = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--report_perf"))
        report_perf = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--num_refine"))
        num_refine = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--hilbert"))
        lb_method = 2;
    if (reorder == -1) {
      if (!lb_method)
        reorder = 1;
      else
        reorder = 0;
    }
    if (check_input())
      MPI_Abort(MPI_COMM_WORLD, -1);
    if (!block_change)
      block_change = num_refine;
    params[0] = num_tsteps;
    params[1] = report_perf;
    params[2] = num_refine;
    params[3] = block_change;
    params[4] = reorder;
    params[5] = lb_method;
    MPI_Bcast(params, 6, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    MPI_Bcast(params, 6, MPI_INT, 0, MPI_COMM_WORLD);
    num_tsteps = params[0];
    report_perf = params[1];
    num_refine = params[2];
    block_change = params[3];
    reorder = params[4];
    lb_method = params[5];
  }
  for (i = 0; i < num_tsteps; i++)
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (report_perf > 0)
    MPI_Barrier(MPI_COMM_WORLD);
  if (block_change > 0 && reorder)
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  printf("rank %d: %g\n", my_pe, sum);
  MPI_Finalize();
  return 0;
}
