/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 18: a derived datatype against a stack array. `build` knows the
 * array's size (100 particles of 32 bytes) but neither the datatype's
 * extent nor the count (it depends on the command line), so it leaves
 * the check to the runtime with the room the buffer has; the runtime
 * finds that 200 particles do not fit, although only 10 arrive. The same
 * array received as 100 ints, and sent as 10 particles, fits. */
#include <mpi.h>
#include <stdio.h>

struct particle {
  double x, y, z;
  int id;
};

int main(int argc, char **argv) {
  int rank, n = argc > 1 ? 50 : 100;
  struct particle p[100];
  MPI_Datatype particle_type;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_contiguous(sizeof(struct particle), MPI_BYTE, &particle_type);
  MPI_Type_commit(&particle_type);
  if (rank == 0) {
    for (int i = 0; i < 100; i++)
      p[i].id = i;
    MPI_Send(p, 10, particle_type, 1, 0, MPI_COMM_WORLD);
    MPI_Send(p, 100, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else {
    MPI_Recv(p, 2 * n, particle_type, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: buffer-overflow rank=1
    MPI_Recv(p, n, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("got %d\n", p[9].id);
  }
  MPI_Type_free(&particle_type);
  MPI_Finalize();
  return 0;
}
