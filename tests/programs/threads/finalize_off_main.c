/* mbhybrid-test: np=2 exit=1 interleavings=1 cflags=-pthread */
/* Issue 40: at every thread level, MPI_Finalize is called on the thread
 * that initialised MPI (MPI-4.0 §11.6.2). Under MPI_THREAD_MULTIPLE a
 * second thread may make MPI calls, but here it also finalizes: an
 * error at that call. */
#include <mpi.h>
#include <pthread.h>

static void *finish(void *arg) {
  (void)arg;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize(); // expect: thread-level rank=0 rank=1
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  pthread_t thread;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  pthread_create(&thread, NULL, finish, NULL);
  pthread_join(thread, NULL);
  return 0;
}
