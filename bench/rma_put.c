/* The cost of recording one-sided communication (BENCHMARKS.md,
 * "Recording one-sided communication"): 200,000 MPI_Puts of one int to
 * the next rank under MPI_Win_lock_all, flushed every 1,000; rank 0
 * prints the nanoseconds per put (MPI_Wtime around the loop). Run on 2
 * ranks by plain mpiexec (the runtime linked but off) and by verify. */
#include <mpi.h>
#include <stdio.h>

#define PUTS 200000

int main(int argc, char **argv) {
  int rank, size, *base, value = 1;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int target = (rank + 1) % size;
  MPI_Win_lock_all(0, win);
  double start = MPI_Wtime();
  for (int i = 0; i < PUTS; i++) {
    MPI_Put(&value, 1, MPI_INT, target, 0, 1, MPI_INT, win);
    if (i % 1000 == 999)
      MPI_Win_flush(target, win);
  }
  MPI_Win_flush(target, win);
  double elapsed = MPI_Wtime() - start;
  MPI_Win_unlock_all(win);
  if (rank == 0)
    printf("ns per put %.1f\n", elapsed * 1e9 / PUTS);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
