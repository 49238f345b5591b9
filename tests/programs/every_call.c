/* mbhybrid-test: np=3 exit=0 interleavings=1 */
/* Every point-to-point and completion call the runtime wraps, and the
 * wrapped collectives, on a ring of three ranks: each send mode blocking,
 * nonblocking and persistent, Sendrecv(_replace), the four probes, every
 * Wait/Test form, Start(all), Request_free, Cancel, Request_get_status;
 * with MPI_STATUS(ES)_IGNORE, MPI_PROC_NULL, zero counts, a vector type and
 * a split communicator. Sources are named (no wildcard), so the output is
 * the same under MPI and under the runtime: each line starts with the
 * rank, MPI_Get_count/MPI_Get_elements after every receive and probe.
 * Rank 0 prints every rank's lines at the end (gathered), so lines of
 * different ranks never mix in the launcher's output. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define OUT_BYTES 16384

static int rank, size, left, right;
static char out[OUT_BYTES];
static int out_len;

/* Appends to this rank's output. */
static void say(const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(out + out_len, OUT_BYTES - out_len, format, args);
  va_end(args);
  if (n > 0 && out_len + n < OUT_BYTES)
    out_len += n;
}

/* Rank 0 prints every rank's output. */
static void print_all(void) {
  char *all = rank == 0 ? malloc((size_t)OUT_BYTES * size) : NULL;
  MPI_Gather(out, OUT_BYTES, MPI_CHAR, all, OUT_BYTES, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; r++)
      fputs(all + (size_t)r * OUT_BYTES, stdout);
    free(all);
  }
}

static void show(const char *what, MPI_Status *st, MPI_Datatype type) {
  int count = -1, elements = -1;
  MPI_Get_count(st, type, &count);
  MPI_Get_elements(st, type, &elements);
  say("r%d %s source=%d tag=%d count=%d elements=%d\n", rank, what,
         st->MPI_SOURCE, st->MPI_TAG, count, elements);
}

static void fill(int *buf, int n, int base) {
  for (int i = 0; i < n; i++)
    buf[i] = base + i;
}

static void print_buf(const char *what, const int *buf, int n) {
  char line[256];
  int at = snprintf(line, sizeof line, "r%d %s", rank, what);
  for (int i = 0; i < n; i++)
    at += snprintf(line + at, sizeof line - at, " %d", buf[i]);
  say("%s\n", line);
}

/* Blocking sends of each mode, received by an Irecv posted first. */
static void blocking_modes(void) {
  int out[4], in[4];
  MPI_Request r;
  MPI_Status st;
  for (int mode = 0; mode < 4; mode++) {
    fill(out, 4, rank * 100 + mode * 10);
    MPI_Irecv(in, 4, MPI_INT, left, mode, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: Rsend is ready */
    switch (mode) {
    case 0: MPI_Send(out, 4, MPI_INT, right, mode, MPI_COMM_WORLD); break;
    case 1: MPI_Ssend(out, 4, MPI_INT, right, mode, MPI_COMM_WORLD); break;
    case 2: MPI_Bsend(out, 4, MPI_INT, right, mode, MPI_COMM_WORLD); break;
    default: MPI_Rsend(out, 4, MPI_INT, right, mode, MPI_COMM_WORLD); break;
    }
    MPI_Wait(&r, &st);
    show("blocking-mode", &st, MPI_INT);
    print_buf("blocking-data", in, 4);
  }
}

/* Nonblocking sends of each mode, completed by a different call each. */
static void nonblocking_modes(void) {
  int out[3], in[3], flag, index, outcount, indices[2];
  MPI_Request r[2];
  MPI_Status sts[2], st;
  for (int mode = 0; mode < 4; mode++) {
    fill(out, 3, rank * 1000 + mode);
    MPI_Irecv(in, 3, MPI_INT, left, 10 + mode, MPI_COMM_WORLD, &r[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    switch (mode) {
    case 0: MPI_Isend(out, 3, MPI_INT, right, 10 + mode, MPI_COMM_WORLD, &r[1]); break;
    case 1: MPI_Issend(out, 3, MPI_INT, right, 10 + mode, MPI_COMM_WORLD, &r[1]); break;
    case 2: MPI_Ibsend(out, 3, MPI_INT, right, 10 + mode, MPI_COMM_WORLD, &r[1]); break;
    default: MPI_Irsend(out, 3, MPI_INT, right, 10 + mode, MPI_COMM_WORLD, &r[1]); break;
    }
    switch (mode) {
    case 0:
      MPI_Waitall(2, r, sts);
      show("waitall", &sts[0], MPI_INT);
      break;
    case 1:
      flag = 0;
      while (!flag)
        MPI_Testall(2, r, &flag, sts);
      show("testall", &sts[0], MPI_INT);
      break;
    case 2: {
      int done = 0;
      while (done < 2) {
        MPI_Waitany(2, r, &index, &st);
        if (index == 0)
          show("waitany", &st, MPI_INT);
        done++;
      }
      break;
    }
    default: {
      int done = 0;
      while (done < 2) {
        MPI_Waitsome(2, r, &outcount, indices, sts);
        for (int k = 0; k < outcount; k++)
          if (indices[k] == 0)
            show("waitsome", &sts[k], MPI_INT);
        done += outcount;
      }
      break;
    }
    }
    print_buf("nonblocking-data", in, 3);
  }
  /* MPI_Test, MPI_Testany, MPI_Testsome on a receive and a send each. */
  fill(out, 3, rank * 7);
  MPI_Irecv(in, 3, MPI_INT, left, 20, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 3, MPI_INT, right, 20, MPI_COMM_WORLD, &r[1]);
  flag = 0;
  while (!flag)
    MPI_Test(&r[0], &flag, &st);
  show("test", &st, MPI_INT);
  flag = 0;
  while (!flag)
    MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
  MPI_Irecv(in, 3, MPI_INT, left, 21, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 3, MPI_INT, right, 21, MPI_COMM_WORLD, &r[1]);
  for (int done = 0; done < 2;) {
    flag = 0;
    MPI_Testany(2, r, &index, &flag, &st);
    if (flag && index != MPI_UNDEFINED) {
      if (index == 0)
        show("testany", &st, MPI_INT);
      done++;
    }
  }
  MPI_Irecv(in, 3, MPI_INT, left, 22, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 3, MPI_INT, right, 22, MPI_COMM_WORLD, &r[1]);
  for (int done = 0; done < 2;) {
    MPI_Testsome(2, r, &outcount, indices, sts);
    for (int k = 0; k < outcount && outcount != MPI_UNDEFINED; k++) {
      if (indices[k] == 0)
        show("testsome", &sts[k], MPI_INT);
      done++;
    }
  }
  print_buf("test-data", in, 3);
}

/* Persistent requests of each send mode, restarted twice. */
static void persistent_modes(void) {
  int out[2], in[2];
  MPI_Request recv, send;
  MPI_Status st;
  for (int mode = 0; mode < 4; mode++) {
    MPI_Recv_init(in, 2, MPI_INT, left, 30 + mode, MPI_COMM_WORLD, &recv);
    switch (mode) {
    case 0: MPI_Send_init(out, 2, MPI_INT, right, 30 + mode, MPI_COMM_WORLD, &send); break;
    case 1: MPI_Ssend_init(out, 2, MPI_INT, right, 30 + mode, MPI_COMM_WORLD, &send); break;
    case 2: MPI_Bsend_init(out, 2, MPI_INT, right, 30 + mode, MPI_COMM_WORLD, &send); break;
    default: MPI_Rsend_init(out, 2, MPI_INT, right, 30 + mode, MPI_COMM_WORLD, &send); break;
    }
    for (int it = 0; it < 2; it++) {
      fill(out, 2, rank * 10 + mode * 100 + it);
      MPI_Start(&recv);
      MPI_Barrier(MPI_COMM_WORLD);
      if (it == 0) {
        MPI_Start(&send);
        int flag = 0;
        while (!flag)
          MPI_Request_get_status(recv, &flag, &st);
        show("persistent-status", &st, MPI_INT);
        MPI_Wait(&recv, &st);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
      } else {
        MPI_Request both[2] = {send, recv};
        MPI_Status sts[2];
        MPI_Startall(1, both);
        MPI_Waitall(2, both, sts);
        st = sts[1];
      }
      show("persistent", &st, MPI_INT);
      print_buf("persistent-data", in, 2);
    }
    MPI_Request_free(&recv);
    MPI_Request_free(&send);
  }
}

static void sendrecvs(void) {
  int out[2] = {rank, rank + 1}, in[2] = {0, 0}, buf[2] = {rank * 3, rank * 4};
  MPI_Status st;
  MPI_Sendrecv(out, 2, MPI_INT, right, 40, in, 2, MPI_INT, left, 40,
               MPI_COMM_WORLD, &st);
  show("sendrecv", &st, MPI_INT);
  print_buf("sendrecv-data", in, 2);
  MPI_Sendrecv_replace(buf, 2, MPI_INT, right, 41, left, 41, MPI_COMM_WORLD,
                       &st);
  show("sendrecv-replace", &st, MPI_INT);
  print_buf("sendrecv-replace-data", buf, 2);
}

static void probes(void) {
  int out[5], in[5], flag;
  MPI_Request s, r;
  MPI_Status st;
  MPI_Message msg;
  fill(out, 5, rank * 50);
  /* MPI_Probe, then MPI_Recv. */
  MPI_Isend(out, 5, MPI_INT, right, 50, MPI_COMM_WORLD, &s);
  MPI_Probe(left, 50, MPI_COMM_WORLD, &st);
  show("probe", &st, MPI_INT);
  MPI_Recv(in, 5, MPI_INT, left, 50, MPI_COMM_WORLD, &st);
  show("recv", &st, MPI_INT);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  /* MPI_Iprobe, then MPI_Recv with MPI_STATUS_IGNORE. */
  MPI_Isend(out, 4, MPI_INT, right, 51, MPI_COMM_WORLD, &s);
  flag = 0;
  while (!flag)
    MPI_Iprobe(left, 51, MPI_COMM_WORLD, &flag, &st);
  show("iprobe", &st, MPI_INT);
  MPI_Recv(in, 5, MPI_INT, left, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  /* MPI_Mprobe, then MPI_Mrecv. */
  MPI_Isend(out, 3, MPI_INT, right, 52, MPI_COMM_WORLD, &s);
  MPI_Mprobe(left, 52, MPI_COMM_WORLD, &msg, &st);
  show("mprobe", &st, MPI_INT);
  MPI_Mrecv(in, 5, MPI_INT, &msg, &st);
  show("mrecv", &st, MPI_INT);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  /* MPI_Improbe, then MPI_Imrecv. */
  MPI_Isend(out, 2, MPI_INT, right, 53, MPI_COMM_WORLD, &s);
  flag = 0;
  while (!flag)
    MPI_Improbe(left, 53, MPI_COMM_WORLD, &flag, &msg, &st);
  show("improbe", &st, MPI_INT);
  MPI_Imrecv(in, 5, MPI_INT, &msg, &r);
  MPI_Wait(&r, &st);
  show("imrecv", &st, MPI_INT);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  print_buf("probe-data", in, 2);
}

static void cancel_and_free(void) {
  int in = -1, out = rank, cancelled = -1;
  MPI_Request r;
  MPI_Status st;
  /* A receive no message matches, cancelled. */
  MPI_Irecv(&in, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  MPI_Test_cancelled(&st, &cancelled);
  say("r%d cancelled=%d\n", rank, cancelled);
  /* A send freed before it completes; received normally. */
  MPI_Isend(&out, 1, MPI_INT, right, 61, MPI_COMM_WORLD, &r);
  MPI_Request_free(&r);
  MPI_Recv(&in, 1, MPI_INT, left, 61, MPI_COMM_WORLD, &st);
  show("freed-send", &st, MPI_INT);
  say("r%d freed-send-data %d\n", rank, in);
  /* A pair completed with MPI_STATUSES_IGNORE. */
  MPI_Request pair[2];
  MPI_Irecv(&in, 1, MPI_INT, left, 62, MPI_COMM_WORLD, &pair[0]);
  MPI_Isend(&out, 1, MPI_INT, right, 62, MPI_COMM_WORLD, &pair[1]);
  MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
  say("r%d statuses-ignored-data %d\n", rank, in);
  /* A null request among live ones: MPI gives it the empty status (the
   * runtime's polled MPI_Waitall completes the others one by one). */
  MPI_Request three[3];
  MPI_Status st3[3];
  MPI_Irecv(&in, 1, MPI_INT, left, 63, MPI_COMM_WORLD, &three[0]);
  three[1] = MPI_REQUEST_NULL;
  MPI_Isend(&out, 1, MPI_INT, right, 63, MPI_COMM_WORLD, &three[2]);
  MPI_Waitall(3, three, st3);
  show("waitall-null-entry", &st3[1], MPI_INT);
  show("waitall-beside-null", &st3[0], MPI_INT);
  say("r%d waitall-beside-null-data %d\n", rank, in);
}

static void proc_null_and_zero(void) {
  int v = 5, in = -1;
  MPI_Request r[2];
  MPI_Status st, sts[2];
  MPI_Message msg;
  MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 70, MPI_COMM_WORLD);
  MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 70, MPI_COMM_WORLD, &st);
  show("recv-proc-null", &st, MPI_INT);
  MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 71, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 71, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, sts);
  show("irecv-proc-null", &sts[1], MPI_INT);
  MPI_Sendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 72, &in, 1, MPI_INT, MPI_PROC_NULL,
               72, MPI_COMM_WORLD, &st);
  show("sendrecv-proc-null", &st, MPI_INT);
  MPI_Probe(MPI_PROC_NULL, 73, MPI_COMM_WORLD, &st);
  show("probe-proc-null", &st, MPI_INT);
  MPI_Mprobe(MPI_PROC_NULL, 73, MPI_COMM_WORLD, &msg, &st);
  show("mprobe-proc-null", &st, MPI_INT);
  MPI_Mrecv(&in, 1, MPI_INT, &msg, &st);
  show("mrecv-proc-null", &st, MPI_INT);
  MPI_Recv_init(&in, 1, MPI_INT, MPI_PROC_NULL, 74, MPI_COMM_WORLD, &r[0]);
  MPI_Start(&r[0]);
  MPI_Wait(&r[0], &st);
  show("persistent-proc-null", &st, MPI_INT);
  MPI_Request_free(&r[0]);
  /* Zero counts. */
  MPI_Irecv(&in, 0, MPI_INT, left, 75, MPI_COMM_WORLD, &r[0]);
  MPI_Send(NULL, 0, MPI_INT, right, 75, MPI_COMM_WORLD);
  MPI_Wait(&r[0], &st);
  show("zero-count", &st, MPI_INT);
}

static void derived_type(void) {
  int strided[6], packed[3] = {0, 0, 0}, back[6] = {0};
  MPI_Datatype vec;
  MPI_Status st;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  fill(strided, 6, rank * 10);
  /* One vector (3 ints, every other one) received as 3 MPI_INT. */
  MPI_Sendrecv(strided, 1, vec, right, 80, packed, 3, MPI_INT, left, 80,
               MPI_COMM_WORLD, &st);
  show("vector-as-int", &st, MPI_INT);
  print_buf("vector-data", packed, 3);
  /* 3 MPI_INT received as one vector. */
  MPI_Sendrecv(packed, 3, MPI_INT, right, 81, back, 1, vec, left, 81,
               MPI_COMM_WORLD, &st);
  show("int-as-vector", &st, vec);
  print_buf("vector-back", back, 6);
  MPI_Type_free(&vec);
}

static void split_comm(void) {
  MPI_Comm half;
  int me, n, v, in = -1, sum = 0;
  MPI_Status st;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Comm_rank(half, &me);
  MPI_Comm_size(half, &n);
  v = rank * 11;
  MPI_Sendrecv(&v, 1, MPI_INT, (me + 1) % n, 90, &in, 1, MPI_INT,
               (me + n - 1) % n, 90, half, &st);
  show("split-sendrecv", &st, MPI_INT);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half);
  say("r%d split size=%d sum=%d got=%d\n", rank, n, sum, in);
  MPI_Comm_free(&half);
}

static void collectives(void) {
  int v = rank + 1, b = 0, red = 0, all = 0;
  int gathered[3] = {0}, scattered = 0, everyone[3] = {0}, a2a_out[3], a2a_in[3];
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    b = 42;
  MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce(&v, &red, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Gather(&v, 1, MPI_INT, gathered, 1, MPI_INT, 2, MPI_COMM_WORLD);
  int source[3] = {7, 8, 9};
  MPI_Scatter(source, 1, MPI_INT, &scattered, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgather(&v, 1, MPI_INT, everyone, 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < 3; i++)
    a2a_out[i] = rank * 10 + i;
  MPI_Alltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD);
  say("r%d bcast=%d reduce=%d allreduce=%d scatter=%d\n", rank, b,
         rank == 1 ? red : -1, all, scattered);
  if (rank == 2)
    print_buf("gather", gathered, 3);
  print_buf("allgather", everyone, 3);
  print_buf("alltoall", a2a_in, 3);
}

int main(int argc, char **argv) {
  int attached = 1 << 16, *detach_at;
  void *buffer = malloc(attached);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  left = (rank + size - 1) % size;
  right = (rank + 1) % size;
  MPI_Buffer_attach(buffer, attached);
  blocking_modes();
  nonblocking_modes();
  persistent_modes();
  sendrecvs();
  probes();
  cancel_and_free();
  proc_null_and_zero();
  derived_type();
  split_comm();
  collectives();
  print_all();
  MPI_Buffer_detach(&detach_at, &attached);
  free(buffer);
  MPI_Finalize();
  return 0;
}
