/* mbhybrid-test: np=2 exit=0 interleavings=1 */
/* Issue 37 (HPCG main.cpp:109, 125): `if (ierr) return ierr;` after a
 * check computed from sizes only: the rank flag it is given gates only
 * its printing. The sizes come from a struct that also holds the rank
 * (read from the command line or a file, then broadcast), and from a
 * geometry allocated with `new` that holds the rank too. */
#include <mpi.h>
#include <cstdio>
#include <cstdlib>

struct Params {
  int comm_rank;
  int comm_size;
  int nx, ny, nz;
  int npx;
};

struct Geometry {
  int rank;
  int npx, npy, npz;
};

static int check_aspect_ratio(double smallest, int x, int y, int z, const char *what, bool do_io) {
  int lo = x < y ? (x < z ? x : z) : (y < z ? y : z);
  int hi = x > y ? (x > z ? x : z) : (y > z ? y : z);
  if (lo / double(hi) < smallest) {
    if (do_io)
      std::printf("the %s sizes are too flat\n", what);
    return 127;
  }
  return 0;
}

static void init(int argc, char **argv, Params &params) {
  int sizes[4] = {16, 16, 16, 0};
  bool broadcast = false;
  if (argc > 1) {
    sizes[0] = std::atoi(argv[1]);
  } else if (FILE *f = std::fopen("dims.dat", "r")) {
    if (std::fscanf(f, "%d %d %d", &sizes[0], &sizes[1], &sizes[2]) != 3)
      sizes[0] = sizes[1] = sizes[2] = 16;
    std::fclose(f);
    broadcast = true;
  }
  if (broadcast)
    MPI_Bcast(sizes, 4, MPI_INT, 0, MPI_COMM_WORLD);
  params.nx = sizes[0];
  params.ny = sizes[1];
  params.nz = sizes[2];
  params.npx = sizes[3];
  MPI_Comm_rank(MPI_COMM_WORLD, &params.comm_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &params.comm_size);
}

static void generate_geometry(int size, int rank, int npx, Geometry *geom) {
  if (npx <= 0 || npx > size)
    npx = size;
  geom->rank = rank;
  geom->npx = npx;
  geom->npy = 1;
  geom->npz = 1;
  if (rank == 0)
    std::printf("process grid %d x 1 x 1\n", npx);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Params params;
  init(argc, argv, params);
  int rank = params.comm_rank, size = params.comm_size;
  int ierr = check_aspect_ratio(0.125, params.nx, params.ny, params.nz, "local problem", rank == 0);
  if (ierr)
    return ierr;
  Geometry *geom = new Geometry;
  generate_geometry(size, rank, params.npx, geom);
  ierr = check_aspect_ratio(0.125, geom->npx * 8, geom->npy * 8, geom->npz * 8, "process grid",
                            rank == 0);
  if (ierr)
    return ierr;
  double local = params.nx * params.ny * params.nz, global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%g points\n", global);
  delete geom;
  MPI_Finalize();
  return 0;
}
