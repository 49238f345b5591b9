/* Transparency (issue 16): what a correct program can ask MPI about its
 * communicators must not change under mbhybrid, which duplicates them
 * (shadows), installs its own error handling and piggybacks headers:
 * MPI_TAG_UB, attribute caching and its copy and delete callbacks,
 * MPI_Comm_compare, error handlers, error classes and strings, probe
 * sizes, and point-to-point over an intercommunicator. The output must
 * equal a plain mpiexec run's. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int copies, deletes;

static int copy_attr(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
  (void)old; (void)key; (void)extra;
  copies++;
  *(void **)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int key, void *value, void *extra) {
  (void)comm; (void)key; (void)value; (void)extra;
  deletes++;
  return MPI_SUCCESS;
}

static const char *comparison(int result) {
  switch (result) {
  case MPI_IDENT: return "ident";
  case MPI_CONGRUENT: return "congruent";
  case MPI_SIMILAR: return "similar";
  default: return "unequal";
  }
}

static void attributes(int rank) {
  int key, value = 17, *got, flag, sum = 0, one = 1, result;
  MPI_Comm with_attr, copied, split;
  MPI_Comm_create_keyval(copy_attr, delete_attr, &key, NULL);
  MPI_Comm_dup(MPI_COMM_WORLD, &with_attr);
  MPI_Comm_set_attr(with_attr, key, &value);
  /* Collectives on a communicator carrying the attribute: the runtime's
   * shadows of it must not run the program's copy callback. */
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, with_attr);
  MPI_Comm_dup(with_attr, &copied);
  MPI_Comm_split(with_attr, rank % 2, rank, &split);
  MPI_Barrier(copied);
  MPI_Barrier(split);
  MPI_Comm_get_attr(copied, key, &got, &flag);
  printf("rank %d attr flag=%d value=%d sum=%d copies=%d\n", rank, flag, flag ? *got : -1, sum, copies);
  /* One printf per line: ranks' output interleaves line by line. */
  int world_dup, dup_dup, dup_split;
  MPI_Comm_compare(MPI_COMM_WORLD, with_attr, &world_dup);
  MPI_Comm_compare(with_attr, with_attr, &dup_dup);
  MPI_Comm_compare(with_attr, split, &dup_split);
  printf("rank %d compare world/dup=%s dup/dup=%s dup/split=%s\n", rank, comparison(world_dup),
         comparison(dup_dup), comparison(dup_split));
  (void)result;
  MPI_Comm_free(&split);
  MPI_Comm_free(&copied);
  MPI_Comm_free(&with_attr);
  MPI_Comm_free_keyval(&key);
  printf("rank %d deletes=%d\n", rank, deletes);
}

static void errors(int rank) {
  MPI_Errhandler handler;
  MPI_Comm returning;
  int size, rc, class, length, value = 1;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
  printf("rank %d world handler fatal=%d\n", rank, handler == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&handler);
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(returning, &handler);
  printf("rank %d dup handler return=%d\n", rank, handler == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  /* The error classes and strings MPI defines are MPI's own. */
  int classes[] = {MPI_ERR_TRUNCATE, MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_COMM};
  for (int i = 0; i < 4; i++) {
    MPI_Error_class(classes[i], &class);
    MPI_Error_string(classes[i], text, &length);
    printf("rank %d error %d class=%d length=%d %s\n", rank, i, class == classes[i],
           length == (int)strlen(text), text);
  }
  (void)rc;
  (void)size;
  (void)value;
  MPI_Comm_free(&returning);
}

static void tags_and_probes(int rank, int size) {
  int *tag_ub, flag, data[5], count, elements;
  MPI_Status status;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  printf("rank %d tag_ub flag=%d at-least-32767=%d\n", rank, flag, flag && *tag_ub >= 32767);
  if (flag && rank == 0)
    printf("tag_ub value=%d\n", *tag_ub);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out[5] = {1, 2, 3, 4, 5};
  MPI_Request sent;
  MPI_Isend(out, 5, MPI_INT, right, flag ? *tag_ub : 0, MPI_COMM_WORLD, &sent);
  MPI_Probe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  MPI_Get_count(&status, MPI_INT, &count);
  MPI_Get_elements(&status, MPI_INT, &elements);
  printf("rank %d probe count=%d elements=%d tag-is-ub=%d\n", rank, count, elements,
         flag && status.MPI_TAG == *tag_ub);
  MPI_Recv(data, 5, MPI_INT, left, status.MPI_TAG, MPI_COMM_WORLD, &status);
  MPI_Wait(&sent, MPI_STATUS_IGNORE);
  MPI_Get_count(&status, MPI_BYTE, &count);
  printf("rank %d recv bytes=%d\n", rank, count);
}

static void intercommunicator(int rank) {
  MPI_Comm half, inter;
  int remote_size, value = rank, got = -1;
  MPI_Status status;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  /* Leaders: world ranks 0 (evens) and 1 (odds). */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
  MPI_Comm_remote_size(inter, &remote_size);
  int local_rank;
  MPI_Comm_rank(half, &local_rank);
  /* Each rank sends to its peer of the same local rank in the other group. */
  MPI_Sendrecv(&value, 1, MPI_INT, local_rank, 5, &got, 1, MPI_INT, local_rank, 5, inter, &status);
  printf("rank %d inter remote_size=%d got=%d source=%d\n", rank, remote_size, got, status.MPI_SOURCE);
  /* Collectives across the intercommunicator: the even group's leader
   * broadcasts to the odd group; an allreduce sums the other group's. */
  int from_root = rank == 0 ? 77 : -1, sum = 0, mine = rank + 1;
  int root = rank % 2 == 0 ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&from_root, 1, MPI_INT, root, inter);
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
  printf("rank %d inter bcast=%d allreduce=%d\n", rank, rank % 2 ? from_root : -1, sum);
  /* Merged back into one intracommunicator, odds first. */
  MPI_Comm merged;
  int merged_rank;
  MPI_Intercomm_merge(inter, rank % 2 == 0, &merged);
  MPI_Comm_rank(merged, &merged_rank);
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged);
  printf("rank %d merged rank=%d allreduce=%d\n", rank, merged_rank, sum);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  attributes(rank);
  errors(rank);
  tags_and_probes(rank, size);
  if (size % 2 == 0)
    intercommunicator(rank);
  MPI_Finalize();
  return 0;
}
