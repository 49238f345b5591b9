/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37: MPICH's test harness (test/mpi/util/mtest.c,
 * MTestGetIntercomm, and coll/icbarrier.c) reduced. A loop offers one
 * intercommunicator after another; each is made only when the world is
 * large enough, one of them without rank 0 (a split with MPI_UNDEFINED,
 * then `if (rank != 0) MPI_Intercomm_create(..)` on the part rank 0 is
 * not in); the loop ends when every rank agrees (an Allreduce of `done`).
 * The test body calls the same helper on both sides of `if (left)`, then
 * prints an error through MPI_Error_string, which makes no collective. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int comm_index = 0;

static void print_error(int err) {
  char text[MPI_MAX_ERROR_STRING];
  int len;
  MPI_Error_string(err, text, &len);
  fprintf(stderr, "error: %s\n", text);
}

static int test_barrier(int is_blocking, MPI_Comm comm) {
  if (is_blocking)
    return MPI_Barrier(comm);
  MPI_Request req = MPI_REQUEST_NULL;
  int err = MPI_Ibarrier(comm, &req);
  if (err != MPI_SUCCESS)
    return err;
  return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static int get_intercomm(MPI_Comm *comm, int *is_left, int min_size) {
  int size, rank, remsize, done = 0, rleader;
  MPI_Comm mcomm = MPI_COMM_NULL;
  while (!done) {
    *comm = MPI_COMM_NULL;
    *is_left = 0;
    switch (comm_index) {
    case 0:
      /* Split the world in half. */
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      if (size > 1) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &mcomm);
        if (rank == 0)
          rleader = size / 2;
        else if (rank == size / 2)
          rleader = 0;
        else
          rleader = -1;
        *is_left = rank < size / 2;
        MPI_Intercomm_create(mcomm, 0, MPI_COMM_WORLD, rleader, 12345, comm);
      }
      break;
    case 1:
      /* Split the world in half, then dup the intercommunicator. */
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      if (size > 1) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &mcomm);
        rleader = rank == 0 ? size / 2 : rank == size / 2 ? 0 : -1;
        *is_left = rank < size / 2;
        MPI_Intercomm_create(mcomm, 0, MPI_COMM_WORLD, rleader, 12345, comm);
        MPI_Comm_free(&mcomm);
        mcomm = *comm;
        MPI_Comm_dup(mcomm, comm);
      }
      break;
    case 2:
      /* Leave rank 0 out of the left half. */
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      if (size >= 4) {
        int color = rank < size / 2 ? 0 : 1;
        if (rank == 0)
          color = MPI_UNDEFINED;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &mcomm);
        rleader = rank == 1 ? size / 2 : rank == size / 2 ? 1 : -1;
        *is_left = rank < size / 2;
        if (rank != 0)
          MPI_Intercomm_create(mcomm, 0, MPI_COMM_WORLD, rleader, 12346, comm);
      }
      break;
    default:
      comm_index = -1;
      break;
    }
    if (*comm != MPI_COMM_NULL) {
      MPI_Comm_size(*comm, &size);
      MPI_Comm_remote_size(*comm, &remsize);
      if (size + remsize >= min_size)
        done = 1;
    } else {
      done = 1;
    }
    /* Every rank is done only when all are. */
    MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    comm_index++;
    if (!done && *comm != MPI_COMM_NULL)
      MPI_Comm_free(comm);
    if (mcomm != MPI_COMM_NULL)
      MPI_Comm_free(&mcomm);
  }
  return comm_index;
}

int main(int argc, char **argv) {
  MPI_Comm comm;
  int left, errs = 0, err;
  int is_blocking = !(argc > 1 && atoi(argv[1]) == 0);
  MPI_Init(&argc, &argv);
  while (get_intercomm(&comm, &left, 2)) {
    if (comm == MPI_COMM_NULL)
      continue;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (left) {
      err = test_barrier(is_blocking, comm);
      if (err) {
        errs++;
        print_error(err);
      }
    } else {
      err = test_barrier(is_blocking, comm);
      if (err) {
        errs++;
        print_error(err);
      }
    }
    MPI_Comm_free(&comm);
  }
  if (errs)
    printf("%d errors\n", errs);
  MPI_Finalize();
  return 0;
}
