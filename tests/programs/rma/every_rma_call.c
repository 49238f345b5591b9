/* mbhybrid-test: np=2 exit=3 interleavings=1 */
/* Issue 39: every RMA function the runtime records, each in a correct
 * epoch, on windows of every kind; each rank prints what it computed,
 * which must be what it computes under plain MPI. No epoch error;
 * partial (passive target and shared windows: their window memory is not
 * watched). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, peer, *mem, *alloc, *shared, got = -1, one = 1, old = -1;
  int cmp = 0, swap = 7, fetched = -1, flag = 0, r[4] = {-1, -1, -1, -1};
  MPI_Win created, allocated, shm, dynamic;
  MPI_Request reqs[4];
  MPI_Group world, other;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  peer = 1 - rank;
  MPI_Alloc_mem(4 * sizeof(int), MPI_INFO_NULL, &mem);
  for (int i = 0; i < 4; i++)
    mem[i] = 0;
  MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                 MPI_COMM_WORLD, &created);
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &alloc, &allocated);
  for (int i = 0; i < 8; i++)
    alloc[i] = 0;
  MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_SELF, &shared, &shm);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dynamic);

  /* Fence epoch: put, get, accumulate. */
  MPI_Win_fence(0, created);
  int mine = 10 + rank;
  MPI_Put(&mine, 1, MPI_INT, peer, 0, 1, MPI_INT, created);
  MPI_Accumulate(&one, 1, MPI_INT, peer, 2, 1, MPI_INT, MPI_SUM, created);
  MPI_Win_fence(0, created);
  MPI_Get(&got, 1, MPI_INT, peer, 0, 1, MPI_INT, created);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, created);

  /* Passive target, every rank at once: atomics, request-based
   * operations, flushes. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, allocated);
  MPI_Fetch_and_op(&one, &old, MPI_INT, peer, 0, MPI_SUM, allocated);
  MPI_Compare_and_swap(&swap, &cmp, &fetched, MPI_INT, peer, 1, allocated);
  MPI_Win_flush(peer, allocated);
  MPI_Rput(&mine, 1, MPI_INT, peer, 2, 1, MPI_INT, allocated, &reqs[0]);
  MPI_Raccumulate(&one, 1, MPI_INT, peer, 3, 1, MPI_INT, MPI_SUM, allocated,
                  &reqs[1]);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
  MPI_Win_flush_all(allocated);
  MPI_Rget(&r[0], 1, MPI_INT, peer, 2, 1, MPI_INT, allocated, &reqs[2]);
  MPI_Rget_accumulate(&one, 1, MPI_INT, &r[1], 1, MPI_INT, peer, 4, 1,
                      MPI_INT, MPI_SUM, allocated, &reqs[3]);
  MPI_Wait(&reqs[2], MPI_STATUS_IGNORE);
  MPI_Wait(&reqs[3], MPI_STATUS_IGNORE);
  MPI_Get_accumulate(&one, 1, MPI_INT, &r[2], 1, MPI_INT, peer, 5, 1, MPI_INT,
                     MPI_SUM, allocated);
  MPI_Win_flush_local(peer, allocated);
  MPI_Win_flush_local_all(allocated);
  MPI_Win_sync(allocated);
  MPI_Win_unlock_all(allocated);
  MPI_Barrier(MPI_COMM_WORLD);

  /* General active target: rank 1 puts into rank 0, which tests for the
   * end of its exposure epoch. */
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &other);
  if (rank == 0) {
    MPI_Win_post(other, 0, allocated);
    while (!flag)
      MPI_Win_test(allocated, &flag);
  } else {
    MPI_Win_start(other, 0, allocated);
    MPI_Put(&mine, 1, MPI_INT, 0, 6, 1, MPI_INT, allocated);
    MPI_Win_complete(allocated);
    MPI_Win_post(other, 0, allocated);
    MPI_Win_wait(allocated);
  }
  if (rank == 0) {
    MPI_Win_start(other, 0, allocated);
    MPI_Win_complete(allocated);
  }

  /* Own shared memory, under an exclusive lock of itself. */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, shm);
  *shared = 40 + rank;
  MPI_Win_sync(shm);
  MPI_Win_unlock(0, shm);

  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: got %d mem %d %d alloc %d %d %d %d %d %d %d old %d "
         "fetched %d r %d %d %d shared %d\n",
         rank, got, mem[0], mem[2], alloc[0], alloc[1], alloc[2], alloc[3],
         alloc[4], alloc[5], alloc[6], old, fetched, r[0], r[1], r[2],
         *shared);
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&dynamic);
  MPI_Win_free(&shm);
  MPI_Win_free(&allocated);
  MPI_Win_free(&created);
  MPI_Free_mem(mem);
  MPI_Finalize();
  return 0;
}
