/* mbhybrid-test: np=2 exit=2 */
/* Issue 40: an MPI call from inside a callback MPI runs (here the delete
 * callback of an attribute, run by MPI_Comm_free, frees the datatype the
 * attribute caches) is legal at every thread level. This version of
 * mbhybrid cannot follow it yet: the run stops, naming the callback's
 * call and the call it was made from. */
#include <mpi.h>
#include <stddef.h>

static int free_cached(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm;
  (void)keyval;
  (void)extra;
  MPI_Datatype *type = value;
  MPI_Type_free(type);
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  static MPI_Datatype pair;
  int keyval;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_cached, &keyval, NULL);
  MPI_Comm_set_attr(dup, keyval, &pair);
  MPI_Comm_free(&dup);
  MPI_Comm_free_keyval(&keyval);
  MPI_Finalize();
  return 0;
}
