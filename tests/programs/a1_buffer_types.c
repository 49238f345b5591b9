/* mbhybrid-test: np=2 exit=1 interleavings=1 */
/* Issue 18: an `int` sent and received as `MPI_FLOAT`. Both ranks use the
 * same wrong datatype, so MPI matches the messages and the run is fine;
 * the static check reports both calls before any run. The other buffers
 * are right and must stay silent: a `(void *)` cast at the call, a
 * `void *` variable, an `MPI_BYTE` view of a double array, `MPI_IN_PLACE`,
 * and a struct with a derived datatype. */
#include <mpi.h>
#include <stddef.h>

struct particle {
  int id;
  double pos[3];
};

int main(int argc, char **argv) {
  int rank, count = 42;
  double values[4] = {1, 2, 3, 4};
  double total = 0;
  void *raw = values;
  struct particle p = {7, {0.5, 1.5, 2.5}};
  MPI_Datatype particle_type;
  int lengths[2] = {1, 3};
  MPI_Aint offsets[2] = {offsetof(struct particle, id), offsetof(struct particle, pos)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Type_create_struct(2, lengths, offsets, types, &particle_type);
  MPI_Type_commit(&particle_type);
  if (rank == 0) {
    MPI_Send(&count, 1, MPI_FLOAT, 1, 0, MPI_COMM_WORLD); // expect: buffer-type rank=0
    MPI_Send((void *)&total, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
    MPI_Send(raw, 4, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    MPI_Send(values, 4 * sizeof(double), MPI_BYTE, 1, 3, MPI_COMM_WORLD);
    MPI_Send(&p, 1, particle_type, 1, 4, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&count, 1, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // expect: buffer-type rank=1
    MPI_Recv((void *)&total, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(raw, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(values, 4 * sizeof(double), MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&p, 1, particle_type, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Allreduce(MPI_IN_PLACE, values, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Type_free(&particle_type);
  MPI_Finalize();
  return 0;
}
